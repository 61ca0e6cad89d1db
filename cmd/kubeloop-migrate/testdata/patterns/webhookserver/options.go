// Package webhookserver builds manager options with a webhook server whose
// TLS options come from a configuration, in the shape of
// kubernetes-sigs/jobset's config loader, and reads them back from the
// server the way its tests do (asserting controller-runtime's concrete
// webhook.DefaultServer and reading its Options).
package webhookserver

import (
	"crypto/tls"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

// Config is the webhook part of a configuration file.
type Config struct {
	Port       int
	MinVersion uint16
}

// AddWebhookTo sets o.WebhookServer from cfg.
func AddWebhookTo(o *manager.Options, cfg Config) {
	wo := webhook.Options{Port: cfg.Port}
	if cfg.MinVersion != 0 {
		wo.TLSOpts = append(wo.TLSOpts, func(c *tls.Config) { c.MinVersion = cfg.MinVersion })
	}
	o.WebhookServer = webhook.NewServer(wo)
}

// Port returns the port of the server in o, 0 when there is none.
func Port(o manager.Options) int {
	if o.WebhookServer == nil {
		return 0
	}
	return o.WebhookServer.(*webhook.DefaultServer).Options.Port
}

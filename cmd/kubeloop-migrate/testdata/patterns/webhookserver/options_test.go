package webhookserver

import (
	"crypto/tls"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

func TestAddWebhookTo(t *testing.T) {
	var o manager.Options
	AddWebhookTo(&o, Config{Port: 9443, MinVersion: tls.VersionTLS13})
	if got := Port(o); got != 9443 {
		t.Errorf("port: got %d, want 9443", got)
	}

	defaultServer, ok := o.WebhookServer.(*webhook.DefaultServer)
	if !ok {
		t.Fatal("the webhook server is the default server")
	}
	if len(defaultServer.Options.TLSOpts) != 1 {
		t.Fatalf("one TLS option, got %d", len(defaultServer.Options.TLSOpts))
	}
	c := &tls.Config{}
	for _, opt := range defaultServer.Options.TLSOpts {
		opt(c)
	}
	if c.MinVersion != tls.VersionTLS13 {
		t.Errorf("MinVersion = %v, want TLS 1.3", c.MinVersion)
	}

	want := manager.Options{WebhookServer: &webhook.DefaultServer{Options: webhook.Options{Port: 9443}}}
	if Port(want) != Port(o) {
		t.Errorf("the expected options' port %d differs from %d", Port(want), Port(o))
	}
	if Port(manager.Options{}) != 0 {
		t.Error("no server, no port")
	}
}

package manager

import (
	"fmt"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/webhook"
)

var _ webhook.Manager = (*Manager)(nil)

// GetWebhookServer returns the manager's webhook server: Options.WebhookServer,
// or a default one created and added on the first call (see
// Options.WebhookServer). A disabled Options.WebhookServer
// (webhook.Options{Port: -1}) is returned too, and registering on it
// works, but the manager does not run it. It returns nil only when the manager is stopping
// and no server existed.
func (m *Manager) GetWebhookServer() *webhook.Server {
	m.webhookMu.Lock()
	defer m.webhookMu.Unlock()
	if m.webhookServer == nil {
		srv := webhook.NewServer(webhook.Options{Metrics: m.Metrics(), Logger: m.webhookLogger()})
		if err := m.addWebhookServerLocked(srv); err != nil {
			m.logger.Error(err, "cannot add the default webhook server")
			return nil
		}
	}
	return m.webhookServer
}

// webhookLogger is the logger of the manager's webhook server.
func (m *Manager) webhookLogger() logr.Logger { return m.logger.WithName("webhook") }

// addWebhookServerLocked adds srv as a runnable and a readiness check,
// first giving it the manager's registry and logger where its Options left
// them zero (a Server the user built with webhook.NewServer). A Disabled
// server (webhook.Options{Port: -1}) is only kept, so that
// GetWebhookServer returns it and registering on it works: it is not run
// and not in readiness. m.webhookMu is held.
func (m *Manager) addWebhookServerLocked(srv *webhook.Server) error {
	if err := srv.UseDefaults(m.Metrics(), m.webhookLogger()); err != nil {
		return fmt.Errorf("manager: webhook server: %w", err)
	}
	if srv.Disabled() {
		m.webhookLogger().Info("webhook server disabled (webhook.Options.Port is negative); webhooks registered on it are not served")
		m.webhookServer = srv
		return nil
	}
	if err := m.Add(srv); err != nil {
		return err
	}
	if err := m.readyz.AddCheck("webhook", srv.StartedChecker()); err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	m.webhookServer = srv
	return nil
}

package manager

import (
	"fmt"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/webhook"
)

var _ webhook.Manager = (*Manager)(nil)

// GetWebhookServer returns the manager's webhook server: Options.WebhookServer,
// or a default one created and added on the first call (see
// Options.WebhookServer). It returns nil only when the manager is stopping
// and no server existed.
func (m *Manager) GetWebhookServer() *webhook.Server {
	m.webhookMu.Lock()
	defer m.webhookMu.Unlock()
	if m.webhookServer == nil {
		srv := webhook.NewServer(webhook.Options{Metrics: m.registry, Logger: m.webhookLogger()})
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
// them zero (a Server the user built with webhook.NewServer). m.webhookMu
// is held.
func (m *Manager) addWebhookServerLocked(srv *webhook.Server) error {
	if err := srv.UseDefaults(m.registry, m.webhookLogger()); err != nil {
		return fmt.Errorf("manager: webhook server: %w", err)
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

package manager

import (
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/kubeloop/kubeloop/manager/healthz"
)

// crdSourcesCheck is the name of the readiness check that lists the kinds
// the controllers wait for.
const crdSourcesCheck = "crd-sources"

// waitingController is a controller whose sources can wait for their kind
// to be served (controller.Controller; builder.WaitForCRD).
type waitingController interface {
	ControllerName() string
	WaitingKinds() []string
}

// crdSources is the crd-sources readiness check: it passes, and names the
// kinds each controller waits for.
type crdSources struct {
	mu    sync.Mutex
	ctrls []waitingController
}

// noteControllerLocked adds r to the crd-sources check if r is a
// controller, adding the check with the first one. The caller holds m.mu.
func (m *Manager) noteControllerLocked(r Runnable) error {
	wc, ok := r.(waitingController)
	if !ok {
		return nil
	}
	if m.crdSources == nil {
		cs := &crdSources{}
		if err := m.readyz.AddCheck(crdSourcesCheck, cs.check); err != nil {
			return fmt.Errorf("manager: readiness check for controller %q: %w", wc.ControllerName(), err)
		}
		m.crdSources = cs
	}
	m.crdSources.mu.Lock()
	m.crdSources.ctrls = append(m.crdSources.ctrls, wc)
	m.crdSources.mu.Unlock()
	return nil
}

// check passes; while kinds wait, its note names them:
// "waiting for kinds to be served: Widget.example.com (controller widget)".
func (s *crdSources) check(*http.Request) error {
	s.mu.Lock()
	ctrls := append([]waitingController(nil), s.ctrls...)
	s.mu.Unlock()
	var parts []string
	for _, c := range ctrls {
		for _, kind := range c.WaitingKinds() {
			parts = append(parts, fmt.Sprintf("%s (controller %s)", kind, c.ControllerName()))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return healthz.Note("waiting for kinds to be served: " + strings.Join(parts, ", "))
}

package manager

import (
	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/controller"
)

var _ controller.ConfigProvider = (*Manager)(nil)

// GetControllerOptions returns Options.Controller: the defaults that
// controller.New and controller/builder give every controller of the
// manager (controller-runtime's name). A controller's Logger left zero in
// both takes the manager's logger.
func (m *Manager) GetControllerOptions() config.Controller {
	return m.opts.Controller
}

// nameCheckSkipper is a controller that may share its name with another
// (controller.Options.SkipNameValidation, or the manager's
// Options.Controller.SkipNameValidation).
type nameCheckSkipper interface {
	SkipNameValidation() bool
}

// skipsNameCheck reports whether Add lets r share its controller name.
func skipsNameCheck(r Runnable) bool {
	s, ok := r.(nameCheckSkipper)
	return ok && s.SkipNameValidation()
}

package manager

import (
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/trace"
)

var _ controller.TracerProvider = (*Manager)(nil)

// GetTracer returns Options.Tracer, which controller.New and
// controller/builder give every controller of the manager that has no
// Tracer of its own; nil means tracing is off.
func (m *Manager) GetTracer() trace.Tracer { return m.opts.Tracer }

package builder

import (
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/source"
)

// defaultFromManager sets the options left zero from the manager's
// config.Controller, when the manager holds one: the workers of
// GroupKindConcurrency for For's kind ("Kind.group"), then the fields of
// DefaultFromConfig. Build calls it after shard, so a sharded kind's
// NeedLeaderElection false is not overridden.
func (b *TypedBuilder[request]) defaultFromManager(opts *controller.Options) {
	cp, ok := b.mgr.(controller.ConfigProvider)
	if !ok {
		return
	}
	cfg := cp.GetControllerOptions()
	if opts.MaxConcurrentReconciles == 0 && b.forInput != nil && len(cfg.GroupKindConcurrency) > 0 {
		if gvk, err := apiutil.GVKForObject(b.forInput.obj, b.mgr.GetScheme()); err == nil {
			if n := cfg.GroupKindConcurrency[gvk.GroupKind().String()]; n > 0 {
				opts.MaxConcurrentReconciles = n
			}
		}
	}
	opts.DefaultFromConfig(cfg)
}

func isNilSource[request comparable](src source.TypedSource[request]) bool { return src == nil }

package cache_bench

import (
	"context"
	"log/slog"
	"slices"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	klcache "github.com/kubeloop/kubeloop/cache"
	klclient "github.com/kubeloop/kubeloop/client"
)

// cacheUnderTest is what the benchmarks need from a cache, so both
// libraries run the same code.
type cacheUnderTest interface {
	get(ctx context.Context, key types.NamespacedName, obj crclient.Object, noCopy bool) error
	// getShared is the library's cheapest read of one ConfigMap: kubeloop's
	// client.GetShared, which returns the cached object itself;
	// controller-runtime has nothing cheaper than its no-copy Get.
	getShared(ctx context.Context, key types.NamespacedName, scratch *corev1.ConfigMap) (*corev1.ConfigMap, error)
	list(ctx context.Context, list crclient.ObjectList, ns string, noCopy bool) error
	addHandler(ctx context.Context, obj crclient.Object, h toolscache.ResourceEventHandler) (remove func() error, err error)
	start(ctx context.Context) error
	waitForCacheSync(ctx context.Context) bool
}

type impl struct {
	name string
	new  func(cfg *rest.Config) (cacheUnderTest, error)
}

// impls are the caches compared, each with its library's defaults.
var impls = []impl{
	{"kubeloop", func(cfg *rest.Config) (cacheUnderTest, error) {
		c, err := klcache.New(cfg, klcache.Options{Logger: logr.FromSlogHandler(slog.DiscardHandler)})
		return kubeloopCache{c}, err
	}},
	{"controller-runtime", func(cfg *rest.Config) (cacheUnderTest, error) {
		c, err := crcache.New(cfg, crcache.Options{})
		return crCache{c}, err
	}},
}

// ordered returns impls, reversed with -reverse.
func ordered() []impl {
	if !*reverse {
		return impls
	}
	r := slices.Clone(impls)
	slices.Reverse(r)
	return r
}

type kubeloopCache struct{ c *klcache.InformerCache }

// The option slices are hoisted so the adapters add no allocation.
var (
	klNoCopy = []klclient.GetOption{klclient.UnsafeDisableDeepCopy}
	crNoCopy = []crclient.GetOption{crclient.UnsafeDisableDeepCopy}
)

func (k kubeloopCache) get(ctx context.Context, key types.NamespacedName, obj crclient.Object, noCopy bool) error {
	if noCopy {
		return k.c.Get(ctx, key, obj, klNoCopy...)
	}
	return k.c.Get(ctx, key, obj)
}

func (k kubeloopCache) getShared(ctx context.Context, key types.NamespacedName, _ *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return klclient.GetShared[*corev1.ConfigMap](ctx, k.c, key)
}

func (k kubeloopCache) list(ctx context.Context, list crclient.ObjectList, ns string, noCopy bool) error {
	opts := []klclient.ListOption{klclient.InNamespace(ns)}
	if noCopy {
		opts = append(opts, klclient.UnsafeDisableDeepCopy)
	}
	return k.c.List(ctx, list, opts...)
}

func (k kubeloopCache) addHandler(ctx context.Context, obj crclient.Object, h toolscache.ResourceEventHandler) (func() error, error) {
	inf, err := k.c.GetInformer(ctx, obj)
	if err != nil {
		return nil, err
	}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	return func() error { return inf.RemoveEventHandler(reg) }, nil
}

func (k kubeloopCache) start(ctx context.Context) error           { return k.c.Start(ctx) }
func (k kubeloopCache) waitForCacheSync(ctx context.Context) bool { return k.c.WaitForCacheSync(ctx) }

type crCache struct{ c crcache.Cache }

func (c crCache) get(ctx context.Context, key types.NamespacedName, obj crclient.Object, noCopy bool) error {
	if noCopy {
		return c.c.Get(ctx, key, obj, crNoCopy...)
	}
	return c.c.Get(ctx, key, obj)
}

func (c crCache) getShared(ctx context.Context, key types.NamespacedName, scratch *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return scratch, c.c.Get(ctx, key, scratch, crNoCopy...)
}

func (c crCache) list(ctx context.Context, list crclient.ObjectList, ns string, noCopy bool) error {
	opts := []crclient.ListOption{crclient.InNamespace(ns)}
	if noCopy {
		opts = append(opts, crclient.UnsafeDisableDeepCopy)
	}
	return c.c.List(ctx, list, opts...)
}

func (c crCache) addHandler(ctx context.Context, obj crclient.Object, h toolscache.ResourceEventHandler) (func() error, error) {
	inf, err := c.c.GetInformer(ctx, obj)
	if err != nil {
		return nil, err
	}
	reg, err := inf.AddEventHandler(h)
	if err != nil {
		return nil, err
	}
	return func() error { return inf.RemoveEventHandler(reg) }, nil
}

func (c crCache) start(ctx context.Context) error           { return c.c.Start(ctx) }
func (c crCache) waitForCacheSync(ctx context.Context) bool { return c.c.WaitForCacheSync(ctx) }

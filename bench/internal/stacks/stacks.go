// Package stacks holds the controllers the end-to-end benchmarks compare:
// the same ConfigMap controller written with kubeloop, controller-runtime
// and raw client-go, each with its library's defaults. bench/e2e runs them
// against the fake API server, bench/real against envtest.
package stacks

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	cgworkqueue "k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	crcontroller "sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	crreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Observe receives every ConfigMap a reconcile has read.
type Observe func(cm *corev1.ConfigMap)

// A Stack runs a controller of ConfigMaps whose reconciler reads the
// object through the library's usual read path and hands it to observe,
// until ctx ends.
type Stack func(ctx context.Context, cfg *rest.Config, workers int, observe Observe) error

// Stacks are the compared implementations, by name.
var Stacks = map[string]Stack{
	// kubeloop: manager + builder, defaults (cached client with deep copies).
	"kubeloop": func(ctx context.Context, cfg *rest.Config, workers int, observe Observe) error {
		return tracedKubeloop(ctx, cfg, workers, observe, nil) // no Tracer: the manager's default
	},
	// controller-runtime: ctrl.NewManager + builder, defaults (priority
	// queue, cached client with deep copies), metrics server off.
	"controller-runtime": func(ctx context.Context, cfg *rest.Config, workers int, observe Observe) error {
		mgr, err := ctrl.NewManager(cfg, ctrl.Options{Logger: logr.Discard(), Metrics: metricsserver.Options{BindAddress: "0"}})
		if err != nil {
			return err
		}
		c := mgr.GetClient()
		err = ctrl.NewControllerManagedBy(mgr).
			For(&corev1.ConfigMap{}).
			WithOptions(crcontroller.Options{MaxConcurrentReconciles: workers}).
			Complete(crreconcile.Func(func(ctx context.Context, req crreconcile.Request) (crreconcile.Result, error) {
				var cm corev1.ConfigMap
				if err := c.Get(ctx, req.NamespacedName, &cm); err != nil {
					return crreconcile.Result{}, err
				}
				observe(&cm)
				return crreconcile.Result{}, nil
			}))
		if err != nil {
			return err
		}
		return mgr.Start(ctx)
	},
	// client-go: shared informer (protobuf) + typed rate-limiting queue
	// (unnamed: no metrics) + workers reading through the lister (no
	// copy). The hand-written floor.
	"client-go": func(ctx context.Context, cfg *rest.Config, workers int, observe Observe) error {
		cfg = rest.CopyConfig(cfg)
		cfg.ContentType = runtime.ContentTypeProtobuf
		cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return err
		}
		f := informers.NewSharedInformerFactory(cs, 0)
		inf := f.Core().V1().ConfigMaps()
		lister := inf.Lister()
		q := cgworkqueue.NewTypedRateLimitingQueueWithConfig(
			cgworkqueue.DefaultTypedControllerRateLimiter[types.NamespacedName](),
			cgworkqueue.TypedRateLimitingQueueConfig[types.NamespacedName]{})
		enqueue := func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			cm := obj.(*corev1.ConfigMap)
			q.Add(types.NamespacedName{Namespace: cm.Namespace, Name: cm.Name})
		}
		if _, err := inf.Informer().AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc: enqueue, UpdateFunc: func(_, o any) { enqueue(o) }, DeleteFunc: enqueue,
		}); err != nil {
			return err
		}
		f.Start(ctx.Done())
		defer f.Shutdown()
		for range workers {
			go func() {
				for {
					key, quit := q.Get()
					if quit {
						return
					}
					cm, err := lister.ConfigMaps(key.Namespace).Get(key.Name)
					if err == nil {
						observe(cm)
						q.Forget(key)
					} else {
						q.AddRateLimited(key)
					}
					q.Done(key)
				}
			}()
		}
		<-ctx.Done()
		q.ShutDown()
		time.Sleep(10 * time.Millisecond)
		return nil
	},
}

// Names is the order of the comparison; kubeloop first.
var Names = []string{"kubeloop", "controller-runtime", "client-go"}

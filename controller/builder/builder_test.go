package builder_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/reconcile"
)

var noop = reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
	return reconcile.Result{}, nil
})

// unknownType is a client.Object no scheme knows.
type unknownType struct{ corev1.ConfigMap }

func (u *unknownType) DeepCopyObject() runtime.Object {
	return &unknownType{ConfigMap: *u.ConfigMap.DeepCopy()}
}

// notRegistered is apiutil's error for a type the scheme does not know.
const notRegistered = "apiutil: type not registered in the scheme: *builder_test.unknownType (add its package's AddToScheme to the scheme)"

func TestBuilderMistakes(t *testing.T) {
	tests := []struct {
		name  string
		build func(b *builder.Builder) error
		want  string
	}{
		{
			name:  "For twice",
			build: func(b *builder.Builder) error { return b.For(&appsv1.Deployment{}).For(&corev1.Pod{}).Complete(noop) },
			want:  "builder: For called more than once (*v1.Deployment, then *v1.Pod)",
		},
		{
			name: "neither For nor Named",
			build: func(b *builder.Builder) error {
				return b.Watches(&corev1.Pod{}, &handler.EnqueueRequestForObject{}).Complete(noop)
			},
			want: "builder: one of For or Named must be called",
		},
		{
			name:  "nil reconciler",
			build: func(b *builder.Builder) error { return b.For(&appsv1.Deployment{}).Complete(nil) },
			want:  "builder: Complete/Build needs a reconciler, got nil",
		},
		{
			name:  "Owns without For",
			build: func(b *builder.Builder) error { return b.Named("x").Owns(&corev1.Pod{}).Complete(noop) },
			want:  "builder: Owns needs For: the owner kind is For's kind",
		},
		{
			name: "Watches without handler",
			build: func(b *builder.Builder) error {
				return b.For(&appsv1.Deployment{}).Watches(&corev1.Pod{}, nil).Complete(noop)
			},
			want: "builder: Watches(*v1.Pod) was given a nil handler",
		},
		{
			name: "every mistake at once",
			build: func(b *builder.Builder) error {
				return b.For(&appsv1.Deployment{}).For(&corev1.Pod{}).Complete(nil)
			},
			want: "builder: For called more than once (*v1.Deployment, then *v1.Pod)\nbuilder: Complete/Build needs a reconciler, got nil",
		},
		{
			name:  "unknown For type",
			build: func(b *builder.Builder) error { return b.For(&unknownType{}).Complete(noop) },
			want:  "builder: For(*builder_test.unknownType): " + notRegistered,
		},
		{
			name: "unknown owner type",
			build: func(b *builder.Builder) error {
				return b.For(&unknownType{}).Named("x").Owns(&corev1.Pod{}).Complete(noop)
			},
			want: "builder: For(*builder_test.unknownType): " + notRegistered,
		},
		{
			name:  "unknown For type and nil reconciler",
			build: func(b *builder.Builder) error { return b.For(&unknownType{}).Complete(nil) },
			want: "builder: Complete/Build needs a reconciler, got nil\n" +
				"builder: For(*builder_test.unknownType): " + notRegistered,
		},
		{
			name: "unknown Owns and Watches types",
			build: func(b *builder.Builder) error {
				return b.For(&appsv1.Deployment{}).Owns(&unknownType{}).
					Watches(&unknownType{}, &handler.EnqueueRequestForObject{}).Complete(noop)
			},
			want: "builder: Owns(*builder_test.unknownType): " + notRegistered + "\n" +
				"builder: Watches(*builder_test.unknownType): " + notRegistered,
		},
		{
			name: "bad controller options",
			build: func(b *builder.Builder) error {
				return b.For(&appsv1.Deployment{}).
					WithOptions(controller.Options{MaxConcurrentReconciles: -1, CacheSyncTimeout: -time.Second}).Complete(noop)
			},
			want: `controller "deployment": Options.MaxConcurrentReconciles -1 is negative` + "\n" +
				`controller "deployment": Options.CacheSyncTimeout -1s is negative`,
		},
		{
			name: "nil predicates",
			build: func(b *builder.Builder) error {
				return b.For(&appsv1.Deployment{}, builder.WithPredicates(nil)).WithEventFilter(nil).Complete(noop)
			},
			want: "builder: WithEventFilter was given a nil predicate (call 1)\n" +
				"builder: For(*v1.Deployment) was given a nil predicate",
		},
		{
			name: "every kind of mistake at once",
			build: func(b *builder.Builder) error {
				return b.For(&unknownType{}).For(&corev1.Pod{}).
					Owns(nil).
					Watches(&unknownType{}, nil, builder.WithPredicates(nil)).
					WatchesRawSource(nil).
					WithOptions(controller.Options{ReconcileTimeout: -time.Second}).
					Complete(nil)
			},
			want: "builder: For called more than once (*builder_test.unknownType, then *v1.Pod)\n" +
				"builder: Complete/Build needs a reconciler, got nil\n" +
				"builder: For(*builder_test.unknownType): " + notRegistered + "\n" +
				"builder: Owns was given a nil object\n" +
				"builder: Watches(*builder_test.unknownType): " + notRegistered + "\n" +
				"builder: Watches(*builder_test.unknownType) was given a nil predicate\n" +
				"builder: Watches(*builder_test.unknownType) was given a nil handler\n" +
				"builder: WatchesRawSource was given a nil source\n" +
				`controller "(unnamed)": Options.ReconcileTimeout -1s is negative`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mgr := newOfflineManager(t)
			err := tt.build(builder.ControllerManagedBy(mgr))
			require.Error(t, err)
			assert.Equal(t, tt.want, err.Error())
			assert.Empty(t, mgr.runnables, "nothing added to the manager")
		})
	}
}

// WithLogConstructor sets the controller's Options.LogConstructor, as
// controller-runtime's builder does: the controller's own logger is the
// constructor's (called with nil), whichever of WithOptions and
// WithLogConstructor came first.
func TestWithLogConstructor(t *testing.T) {
	for _, optionsFirst := range []bool{true, false} {
		var calls []*reconcile.Request
		ctor := func(req *reconcile.Request) logr.Logger {
			calls = append(calls, req)
			return logr.Discard().WithValues("from", "ctor")
		}
		b := builder.ControllerManagedBy(newManager(t, cfg, "default")).For(&corev1.ConfigMap{}).Named(fmt.Sprintf("logctor-%v", optionsFirst))
		if optionsFirst {
			b = b.WithOptions(controller.Options{MaxConcurrentReconciles: 2}).WithLogConstructor(ctor)
		} else {
			b = b.WithLogConstructor(ctor).WithOptions(controller.Options{MaxConcurrentReconciles: 2})
		}
		_, err := b.Build(reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil }))
		require.NoError(t, err)
		require.Len(t, calls, 1, "options first: %v", optionsFirst)
		assert.Nil(t, calls[0])
	}
}

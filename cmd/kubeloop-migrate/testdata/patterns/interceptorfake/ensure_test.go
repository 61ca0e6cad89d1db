package interceptorfake

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var errUpdate = errors.New("injected update failure")

// failUpdates is a named interceptor function.
func failUpdates(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	return errUpdate
}

func TestEnsureCreatesThroughTheInterceptor(t *testing.T) {
	ctx := context.Background()
	var gets, creates int
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(ctx context.Context, client client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets++
			return client.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			return c.Create(ctx, obj, opts...)
		},
	})
	if err := EnsureConfigMap(ctx, c, "default", "settings", map[string]string{"a": "1"}); err != nil {
		t.Fatal(err)
	}
	if gets != 1 || creates != 1 {
		t.Fatalf("gets=%d creates=%d, want 1 and 1", gets, creates)
	}
	got := &corev1.ConfigMap{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "default", Name: "settings"}, got); err != nil {
		t.Fatal(err)
	}
	if got.Data["a"] != "1" {
		t.Fatalf("data %v", got.Data)
	}
}

func TestEnsureReportsAnInjectedUpdateError(t *testing.T) {
	existing := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "settings"}}
	c := fake.NewClientBuilder().
		WithObjects(existing).
		WithInterceptorFuncs(interceptor.Funcs{Update: failUpdates}).
		Build()
	err := EnsureConfigMap(context.Background(), c, "default", "settings", map[string]string{"a": "2"})
	if !errors.Is(err, errUpdate) {
		t.Fatalf("err = %v, want the injected update failure", err)
	}
	if !strings.Contains(err.Error(), "update configmap default/settings") {
		t.Fatalf("err %q does not name the ConfigMap", err)
	}
}

func TestEnsureReportsAnInjectedGetError(t *testing.T) {
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, key.Name, errors.New("rbac"))
		},
	})
	err := EnsureConfigMap(context.Background(), c, "default", "settings", nil)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("err = %v, want Forbidden", err)
	}
}

package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
	"github.com/kubeloop/kubeloop/webhook/internal/testwidget"
)

// testManager is the smallest webhook.Manager.
type testManager struct {
	scheme *runtime.Scheme
	server *webhook.Server
}

func (m testManager) GetScheme() *runtime.Scheme        { return m.scheme }
func (m testManager) GetWebhookServer() *webhook.Server { return m.server }

// widgetDefaulter sets spec.color to "blue" when it is empty.
type widgetDefaulter struct{}

func (widgetDefaulter) Default(_ context.Context, w *testwidget.V1) error {
	if w.Spec.Color == "" {
		w.Spec.Color = "blue"
	}
	return nil
}

// widgetValidator rejects negative sizes.
type widgetValidator struct{}

func (widgetValidator) ValidateCreate(_ context.Context, w *testwidget.V1) (admission.Warnings, error) {
	return check(w)
}

func (widgetValidator) ValidateUpdate(_ context.Context, _, w *testwidget.V1) (admission.Warnings, error) {
	return check(w)
}

func (widgetValidator) ValidateDelete(context.Context, *testwidget.V1) (admission.Warnings, error) {
	return nil, nil
}

func check(w *testwidget.V1) (admission.Warnings, error) {
	if w.Spec.Size < 0 {
		return nil, fmt.Errorf("spec.size must not be negative, got %d", w.Spec.Size)
	}
	if w.Spec.Size > 100 {
		return admission.Warnings{"spec.size above 100 is deprecated"}, nil
	}
	return nil, nil
}

// newScheme knows Widgets and the core kinds.
// customWidget is the untyped (runtime.Object) defaulter and validator
// of controller-runtime's older webhooks.
type customWidget struct{}

var (
	_ webhook.CustomDefaulter = customWidget{}
	_ webhook.CustomValidator = customWidget{}
)

func (customWidget) Default(ctx context.Context, obj runtime.Object) error {
	w, ok := obj.(*testwidget.V1)
	if !ok {
		return fmt.Errorf("expected a Widget, got %T", obj)
	}
	return widgetDefaulter{}.Default(ctx, w)
}

func (customWidget) ValidateCreate(_ context.Context, obj runtime.Object) (admission.Warnings, error) {
	return check(obj.(*testwidget.V1))
}

func (customWidget) ValidateUpdate(_ context.Context, _, obj runtime.Object) (admission.Warnings, error) {
	return check(obj.(*testwidget.V1))
}

func (customWidget) ValidateDelete(context.Context, runtime.Object) (admission.Warnings, error) {
	return nil, nil
}

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := errors.Join(testwidget.AddToScheme(s), corev1.AddToScheme(s)); err != nil {
		panic(err)
	}
	return s
}

func TestPaths(t *testing.T) {
	tests := []struct {
		give                     schema.GroupVersionKind
		wantMutate, wantValidate string
	}{
		{testwidget.V1Kind, "/mutate-test-kubeloop-dev-v1-widget", "/validate-test-kubeloop-dev-v1-widget"},
		{schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, "/mutate--v1-configmap", "/validate--v1-configmap"},
		{schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "/mutate-apps-v1-deployment", "/validate-apps-v1-deployment"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.wantMutate, webhook.MutatePath(tt.give))
		assert.Equal(t, tt.wantValidate, webhook.ValidatePath(tt.give))
	}
}

func TestBuilderErrors(t *testing.T) {
	newMgr := func() testManager {
		return testManager{scheme: newScheme(), server: webhook.NewServer(webhook.Options{Logger: quiet})}
	}
	t.Run("kind not in scheme", func(t *testing.T) {
		mgr := newMgr()
		mgr.scheme = runtime.NewScheme()
		err := webhook.ManagedBy(mgr, &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).Complete()
		assert.ErrorContains(t, err, "webhook: kind of *testwidget.V1")
	})
	t.Run("nothing to register", func(t *testing.T) {
		err := webhook.ManagedBy(newMgr(), &corev1.ConfigMap{}).Complete()
		assert.ErrorContains(t, err, "has no defaulter, validator or conversion")
	})
	t.Run("path taken, and nothing half registered", func(t *testing.T) {
		mgr := newMgr()
		require.NoError(t, webhook.ManagedBy(mgr, &testwidget.V1{}).WithValidator(widgetValidator{}).Complete())
		err := webhook.ManagedBy(mgr, &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).WithValidator(widgetValidator{}).Complete()
		assert.ErrorContains(t, err, "path /validate-test-kubeloop-dev-v1-widget is already registered")
		// The defaulter's path is still free.
		assert.NoError(t, webhook.ManagedBy(mgr, &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).Complete())
	})
	t.Run("no server", func(t *testing.T) {
		err := webhook.ManagedBy(testManager{scheme: newScheme()}, &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).Complete()
		assert.ErrorContains(t, err, "no webhook server")
	})
	t.Run("only one of typed and custom", func(t *testing.T) {
		err := webhook.ManagedBy(newMgr(), &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).WithCustomDefaulter(customWidget{}).Complete()
		assert.ErrorContains(t, err, "only one of WithDefaulter and WithCustomDefaulter")
		err = webhook.ManagedBy(newMgr(), &testwidget.V1{}).WithValidator(widgetValidator{}).WithCustomValidator(customWidget{}).Complete()
		assert.ErrorContains(t, err, "only one of WithValidator and WithCustomValidator")
	})
	t.Run("custom forms are served at the kind's paths", func(t *testing.T) {
		mgr := newMgr()
		require.NoError(t, webhook.ManagedBy(mgr, &testwidget.V1{}).WithCustomDefaulter(customWidget{}, admission.DefaulterRemoveUnknownOrOmitableFields).WithCustomValidator(customWidget{}).Complete())
		err := webhook.ManagedBy(mgr, &testwidget.V1{}).WithDefaulter(widgetDefaulter{}).Complete()
		assert.ErrorContains(t, err, "path /mutate-test-kubeloop-dev-v1-widget is already registered")
		err = webhook.ManagedBy(mgr, &testwidget.V1{}).WithValidator(widgetValidator{}).Complete()
		assert.ErrorContains(t, err, "path /validate-test-kubeloop-dev-v1-widget is already registered")
	})
	t.Run("conversion alone, registered once", func(t *testing.T) {
		mgr := newMgr()
		require.NoError(t, webhook.ManagedBy(mgr, &testwidget.V2{}).Complete())
		require.NoError(t, webhook.ManagedBy(mgr, &testwidget.V1{}).Complete(), "a second kind version shares /convert")
		assert.Panics(t, func() { mgr.server.Register(webhook.ConvertPath, http.NotFoundHandler()) }, "/convert is taken")
	})
	t.Run("prototypes as runtime.Object, as controller-runtime's constraint allows", func(t *testing.T) {
		mgr := newMgr()
		for _, obj := range []runtime.Object{&testwidget.V2{}, &testwidget.V1{}} {
			require.NoError(t, webhook.ManagedBy(mgr, obj).Complete(), "%T", obj)
		}
		assert.Panics(t, func() { mgr.server.Register(webhook.ConvertPath, http.NotFoundHandler()) }, "/convert is registered")
	})
}

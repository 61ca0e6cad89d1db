package client_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/manager"
)

// typedWidget is the Go type of the Widget custom resource, the way a
// kubebuilder API package declares one. It has no protobuf marshalling.
type typedWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              typedWidgetSpec   `json:"spec,omitempty"`
	Status            typedWidgetStatus `json:"status,omitempty"`
}

type typedWidgetSpec struct {
	Color string `json:"color,omitempty"`
}

type typedWidgetStatus struct {
	Phase string `json:"phase,omitempty"`
}

func (w *typedWidget) DeepCopyObject() runtime.Object {
	out := *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type typedWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []typedWidget `json:"items"`
}

func (l *typedWidgetList) DeepCopyObject() runtime.Object {
	out := *l
	out.Items = make([]typedWidget, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*typedWidget)
	}
	return &out
}

// TestCustomResourceInGlobalScheme is the kubebuilder scaffold's pattern:
// the API types are added to client-go's global scheme.Scheme, which the
// manager is given. A custom resource must still travel as JSON (only the
// API server's built-in groups speak protobuf), through every path: Create,
// Get and List from the cache, a watch through the cache's informer, and
// Status().Update.
func TestCustomResourceInGlobalScheme(t *testing.T) {
	gv := schema.GroupVersion{Group: widgetGVK.Group, Version: widgetGVK.Version}
	clientgoscheme.Scheme.AddKnownTypeWithName(gv.WithKind("Widget"), &typedWidget{})
	clientgoscheme.Scheme.AddKnownTypeWithName(gv.WithKind("WidgetList"), &typedWidgetList{})
	metav1.AddToGroupVersion(clientgoscheme.Scheme, gv)
	assert.False(t, apiutil.IsBuiltIn(widgetGVK), "registering a custom resource does not make it built in")

	ctx, cancel := context.WithCancel(t.Context())
	mgr, err := manager.New(restConfig, manager.Options{Scheme: clientgoscheme.Scheme})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	c := mgr.GetClient()
	ns := newNamespace(t, ctx, c)

	inf, err := mgr.GetCache().GetInformer(ctx, &typedWidget{})
	require.NoError(t, err)
	var added atomic.Int32
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(any) { added.Add(1) }})
	require.NoError(t, err)

	w := &typedWidget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "w"}, Spec: typedWidgetSpec{Color: "blue"}}
	require.NoError(t, c.Create(ctx, w), "a custom resource in the global scheme is created as JSON")
	var got typedWidget
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(w), &got))
	assert.Equal(t, "blue", got.Spec.Color)
	got.Status.Phase = "Ready"
	require.NoError(t, c.Status().Update(ctx, &got))
	require.NoError(t, c.Get(ctx, client.ObjectKeyFromObject(w), &got))
	assert.Equal(t, "Ready", got.Status.Phase)
	require.Eventually(t, func() bool { return added.Load() >= 1 }, time.Minute, 10*time.Millisecond, "the informer's watch delivers the widget")
	var list typedWidgetList
	require.NoError(t, c.List(ctx, &list, client.InNamespace(ns)))
	assert.Len(t, list.Items, 1)

	// A manager with the default scheme does not read the global one; the
	// error says where the type is registered and what to pass.
	plain, err := manager.New(restConfig, manager.Options{})
	require.NoError(t, err)
	err = plain.GetClient().Create(ctx, &typedWidget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "other"}})
	require.ErrorIs(t, err, apiutil.ErrUnknownType)
	assert.ErrorContains(t, err, "client-go's global scheme")
	assert.ErrorContains(t, err, "Options.Scheme")
}

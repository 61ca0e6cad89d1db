package builder_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// Gizmo is a typed custom resource whose Go object carries no apiVersion
// and kind: only the scheme knows its group.
type Gizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (g *Gizmo) DeepCopyObject() runtime.Object {
	out := &Gizmo{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// GizmoList is Gizmo's list.
type GizmoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Gizmo `json:"items"`
}

func (l *GizmoList) DeepCopyObject() runtime.Object {
	out := &GizmoList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*Gizmo))
	}
	return out
}

// BetaGizmo is another Go type of kind Gizmo, in another group.
type BetaGizmo struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
}

func (g *BetaGizmo) DeepCopyObject() runtime.Object {
	out := &BetaGizmo{TypeMeta: g.TypeMeta}
	g.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// BetaGizmoList is BetaGizmo's list.
type BetaGizmoList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []BetaGizmo `json:"items"`
}

func (l *BetaGizmoList) DeepCopyObject() runtime.Object {
	out := &BetaGizmoList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*BetaGizmo))
	}
	return out
}

// gizmoScheme returns the built-in kinds plus Gizmo in groupA and
// BetaGizmo, also of kind Gizmo, in groupB.
func gizmoScheme(t *testing.T, groupA, groupB string) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	require.NoError(t, clientgoscheme.AddToScheme(s))
	a := schema.GroupVersion{Group: groupA, Version: "v1"}
	b := schema.GroupVersion{Group: groupB, Version: "v1"}
	s.AddKnownTypeWithName(a.WithKind("Gizmo"), &Gizmo{})
	s.AddKnownTypeWithName(a.WithKind("GizmoList"), &GizmoList{})
	s.AddKnownTypeWithName(b.WithKind("Gizmo"), &BetaGizmo{})
	s.AddKnownTypeWithName(b.WithKind("GizmoList"), &BetaGizmoList{})
	metav1.AddToGroupVersion(s, a)
	metav1.AddToGroupVersion(s, b)
	return s
}

// gizmoCRD returns a namespaced CRD of kind Gizmo in group.
func gizmoCRD(group string) *unstructured.Unstructured {
	crd := widgetCRD(group)
	crd.SetName("gizmos." + group)
	_ = unstructured.SetNestedStringMap(crd.Object, map[string]string{
		"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList",
	}, "spec", "names")
	return crd
}

// TestWaitForCRDKindsNamedInFull: typed kinds of one name, Gizmo, in two
// groups, watched by one controller (For the first, Watches the second,
// both WaitForCRD), are named in full ("Gizmo.<group>", resolved through
// the scheme) and stay apart in WaitingKinds, the crd-sources readiness
// check and kubeloop_source_waiting{kind}: with both CRDs absent both
// wait; once the first group's CRD is installed, only the second waits,
// and a Gizmo of the first group is reconciled.
func TestWaitForCRDKindsNamedInFull(t *testing.T) {
	suffix := string(uuid.NewUUID())[:8]
	groupA := "gizmo-a" + suffix + ".kubeloop.dev"
	groupB := "gizmo-b" + suffix + ".kubeloop.dev"
	kindA, kindB := "Gizmo."+groupA, "Gizmo."+groupB
	name := "gizmo-" + suffix
	live, ns := newNamespace(t)

	var errs errorLog
	mgr, err := manager.New(cfg, manager.Options{Scheme: gizmoScheme(t, groupA, groupB), Logger: errs.recording(t), HealthProbeBindAddress: "127.0.0.1:0"})
	require.NoError(t, err)
	var reconciled names
	ctrl, err := builder.ControllerManagedBy(mgr).
		For(&Gizmo{}, builder.WaitForCRD).
		Watches(&BetaGizmo{}, &handler.EnqueueRequestForObject{}, builder.WaitForCRD).
		Named(name).
		Build(reconciled.reconciler())
	require.NoError(t, err)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
		deleteCRD(t, live, "gizmos."+groupA)
		deleteCRD(t, live, "gizmos."+groupB)
	})

	reported := func(waiting, served []string) func() bool {
		return func() bool {
			code, body := readyz(t, mgr)
			if code != http.StatusOK {
				return false
			}
			for _, k := range waiting {
				if !strings.Contains(body, k+" (controller "+name+")") || waitingGauge(t, mgr.MetricsRegistry(), name, k) != 1 {
					return false
				}
			}
			for _, k := range served {
				if strings.Contains(body, k+" (controller "+name+")") || waitingGauge(t, mgr.MetricsRegistry(), name, k) != 0 {
					return false
				}
			}
			return true
		}
	}

	require.Eventually(t, reported([]string{kindA, kindB}, nil), wait, 50*time.Millisecond, "both kinds waiting, each under its own name")
	assert.Equal(t, []string{kindA, kindB}, ctrl.WaitingKinds())
	assert.Equal(t, -1.0, waitingGauge(t, mgr.MetricsRegistry(), name, "Gizmo"), "no series under the bare kind")

	require.NoError(t, applyCRD(t, gizmoCRD(groupA)))
	require.Eventually(t, reported([]string{kindB}, []string{kindA}), wait, 50*time.Millisecond, "the first group served, the second still waiting")
	assert.Equal(t, []string{kindB}, ctrl.WaitingKinds())

	g := &Gizmo{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "g1"}}
	require.NoError(t, mgr.GetClient().Create(t.Context(), g))
	require.Eventually(t, reconciled.has("g1"), wait, 20*time.Millisecond, "a Gizmo of the served group is reconciled")
	assert.Empty(t, errs.all(), "nothing logged at ERROR")
}

// TestBuilderLoggerKeys: a controller the builder makes For a kind logs
// controller-runtime's keys of a builder-made controller, exactly:
// controller, controllerGroup, controllerKind, "<Kind>": {name,
// namespace}, namespace, name, reconcileID. The core kind ConfigMap has
// the group "".
func TestBuilderLoggerKeys(t *testing.T) {
	_, ns := newNamespace(t)
	mgr := newManager(t, cfg, ns)
	var mu sync.Mutex
	var buf bytes.Buffer
	mgr.log = logr.FromSlogHandler(slog.NewJSONHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), nil))
	r := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		logr.FromContextOrDiscard(ctx).Info("reconciling")
		return reconcile.Result{}, nil
	})
	ctrl, err := builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Build(r)
	require.NoError(t, err)
	_, err = ctrl.Reconcile(t.Context(), reconcile.Request{NamespacedName: client.ObjectKey{Namespace: ns, Name: "cm"}})
	require.NoError(t, err)

	mu.Lock()
	var line map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m), string(l))
		if m["msg"] == "reconciling" {
			line = m
		}
	}
	mu.Unlock()
	require.NotNil(t, line, "the reconcile logged")
	id, _ := line["reconcileID"].(string)
	assert.NotEmpty(t, id)
	delete(line, "time")
	delete(line, "level")
	assert.Equal(t, map[string]any{
		"msg":             "reconciling",
		"controller":      "configmap",
		"controllerGroup": "",
		"controllerKind":  "ConfigMap",
		"ConfigMap":       map[string]any{"name": "cm", "namespace": ns},
		"namespace":       ns,
		"name":            "cm",
		"reconcileID":     id,
	}, line)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

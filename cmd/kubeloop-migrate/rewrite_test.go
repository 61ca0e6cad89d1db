package main

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// migrateSnippet runs the file rewrites on one file and returns the result
// (the input when nothing changed).
func migrateSnippet(t *testing.T, src string) (string, *report) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments)
	require.NoError(t, err)
	rep := newReport()
	info := packageInfo([]sourceFile{{path: "x.go", src: []byte(src), ast: f}})
	out, err := rewriteFile(fset, "x.go", f, []byte(src), info[f.Name.Name], rep)
	require.NoError(t, err)
	if out == nil {
		return src, rep
	}
	return string(out), rep
}

func TestRewriteRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		give    string
		want    []string // substrings of the result
		notWant []string
		kinds   map[string]int
	}{
		{
			name: "ctrl alias names go to their packages",
			give: `package x
import ctrl "sigs.k8s.io/controller-runtime"
func f(mgr ctrl.Manager) (ctrl.Result, error) {
	_ = ctrl.NewControllerManagedBy(mgr)
	_ = ctrl.SetupSignalHandler()
	_, _ = ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{})
	return ctrl.Result{}, nil
}`,
			want: []string{`func f(mgr *manager.Manager) (reconcile.Result, error)`, `builder.ControllerManagedBy(mgr)`, `signals.SetupSignalHandler()`,
				`manager.New(config.GetConfigOrDie(), manager.Options{})`, `"github.com/kubeloop/kubeloop/controller/builder"`, `"github.com/kubeloop/kubeloop/client/config"`},
			notWant: []string{"controller-runtime", "ctrl."},
			kinds:   map[string]int{kindCtrl: 8},
		},
		{
			name: "whole packages keep their local name",
			give: `package x
import (
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)
var _ client.Client
var _ predicate.Funcs
var l = logf.Log.WithName("x")`,
			want: []string{`logf "github.com/kubeloop/kubeloop/log"`, `"github.com/kubeloop/kubeloop/client"`, `"github.com/kubeloop/kubeloop/handler/predicate"`, `logf.Default().WithName("x")`},
		},
		{
			name: "a name the file declares gets a kl alias",
			give: `package x
import ctrl "sigs.k8s.io/controller-runtime"
func f(config string) { _ = ctrl.GetConfigOrDie() }`,
			want: []string{`klconfig "github.com/kubeloop/kubeloop/client/config"`, `klconfig.GetConfigOrDie()`},
		},
		{
			name: "event types move to handler",
			give: `package x
import "sigs.k8s.io/controller-runtime/pkg/event"
func f(e event.UpdateEvent, g event.GenericEvent) {}`,
			want:    []string{`func f(e handler.UpdateEvent, g handler.GenericEvent)`, `"github.com/kubeloop/kubeloop/handler"`},
			notWant: []string{"pkg/event"},
			kinds:   map[string]int{kindEvent: 2},
		},
		{
			name: "metrics server options and filters move to manager",
			give: `package x
import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)
var o = metricsserver.Options{BindAddress: ":8443", SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization}`,
			want:    []string{`manager.MetricsOptions{BindAddress: ":8443", SecureServing: true, FilterProvider: manager.WithAuthenticationAndAuthorization}`},
			notWant: []string{"metricsserver", "filters"},
			kinds:   map[string]int{kindMetrics: 2},
		},
		{
			name: "option fields: renamed, dropped with a note, dereferenced",
			give: `package x
import (
	"time"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
)
var d = time.Second
var c = controller.Options{ReconciliationTimeout: d, UsePriorityQueue: nil}
var m = ctrl.Options{LeaseDuration: &d, RenewDeadline: pd()}
func pd() *time.Duration { return &d }`,
			want: []string{`controller.Options{ReconcileTimeout: d}`, "// kubeloop-migrate: dropped UsePriorityQueue", "LeaseDuration: d,",
				"RenewDeadline: ptr.Deref(pd(), 0)", `"k8s.io/utils/ptr"`},
			kinds: map[string]int{kindField: 4},
		},
		{
			name: "event recorders become events.k8s.io recorders",
			give: `package x
import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
)
type R struct{ Recorder record.EventRecorder }
func (r *R) f(mgr ctrl.Manager, obj, other any, msg string) {
	r.Recorder = mgr.GetEventRecorderFor("x")
	r.Recorder.Event(obj, corev1.EventTypeNormal, "Created", "made it")
	r.Recorder.Event(obj, corev1.EventTypeNormal, "Created", msg)
	r.Recorder.Eventf(obj, corev1.EventTypeWarning, "Failed", "%d left", 3)
	r.Recorder.Eventf(obj, corev1.EventTypeWarning, reason(), "x")
}
func reason() string { return "r" }`,
			want: []string{"Recorder events.EventRecorder", `mgr.GetEventRecorder("x")`,
				`r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Created", "Created", "made it")`,
				`r.Recorder.Eventf(obj, nil, corev1.EventTypeNormal, "Created", "Created", "%s", msg)`,
				`r.Recorder.Eventf(obj, nil, corev1.EventTypeWarning, "Failed", "Failed", "%d left", 3)`,
				"// kubeloop-migrate: events.k8s.io recorders take Eventf(regarding, related, type, reason, action, note, args...): add the action by hand",
				`"k8s.io/client-go/tools/events"`},
			notWant: []string{"tools/record"},
			kinds:   map[string]int{kindRecorder: 5},
		},
		{
			name: "SetLogger sends slog's default to the logger",
			give: `package x
import (
	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
)
func f(l logr.Logger) { ctrl.SetLogger(l) }`,
			want:    []string{"slog.SetDefault(slog.New(logr.ToSlogHandler(l)))", `"log/slog"`},
			notWant: []string{"ctrl"},
		},
		{
			name: "packages without a kubeloop home are left with one note per file",
			give: `package x
import "sigs.k8s.io/controller-runtime/pkg/cluster"
var a, _ = cluster.New(nil)
var b, _ = cluster.New(nil)`,
			want: []string{"// kubeloop-migrate: sigs.k8s.io/controller-runtime/pkg/cluster: kubeloop has no cluster package", `"sigs.k8s.io/controller-runtime/pkg/cluster"`},
		},
		{
			name: "Requeue is left alone; unsupported names get notes",
			give: `package x
import (
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)
var r = reconcile.Result{Requeue: true}
var c = client.Options{FieldValidation: "Strict"}`,
			want:    []string{"var r = reconcile.Result{Requeue: true}", "FieldValidation: not offered"},
			notWant: []string{"Requeue: Result"},
		},
		{
			name: "client wrappers keep their names",
			give: `package x
import "sigs.k8s.io/controller-runtime/pkg/client"
var a = client.NewNamespacedClient(nil, "ns")
var b = client.WithFieldOwner(a, "me")
var c = client.NewDryRunClient(b)
var w, err = client.NewWithWatch(nil, client.Options{})`,
			want:    []string{`"github.com/kubeloop/kubeloop/client"`, `client.NewNamespacedClient(nil, "ns")`, `client.WithFieldOwner(a, "me")`, "client.NewDryRunClient(b)", "client.NewWithWatch(nil, client.Options{})"},
			notWant: []string{"kubeloop-migrate:", "controller-runtime"},
		},
		{
			name: "WithLogConstructor is kept: kubeloop's builder has it",
			give: `package x
import ctrl "sigs.k8s.io/controller-runtime"
func setup(mgr ctrl.Manager, r any, l func(*ctrl.Request) any) error {
	return ctrl.NewControllerManagedBy(mgr).Named("cron").WithLogConstructor(nil).Complete(nil)
}`,
			want:    []string{".WithLogConstructor(nil)"},
			notWant: []string{"kubeloop-migrate:"},
		},
		{
			name: "renamed functions",
			give: `package x
import (
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)
var a = reconcile.AsReconciler
var h = conversion.NewWebhookHandler`,
			want:  []string{"controller.AsReconciler", "conversion.NewWebhook\n", `"github.com/kubeloop/kubeloop/controller"`},
			kinds: map[string]int{kindRename: 2},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, rep := migrateSnippet(t, tc.give)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			for _, w := range tc.notWant {
				assert.NotContains(t, out, w)
			}
			for k, n := range tc.kinds {
				assert.Equal(t, n, rep.rewrites[k], "rewrites of kind %q", k)
			}
			again, _ := migrateSnippet(t, out)
			assert.Equal(t, out, again, "a second run changes nothing")
		})
	}
}

const customWebhook = `package v1
import (
	"context"
	"fmt"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	appsv1 "k8s.io/api/apps/v1"
)
func Setup(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr).For(&appsv1.Deployment{}).WithDefaulter(&D{}).WithValidator(&V{}).Complete()
}
type D struct{}
var _ webhook.CustomDefaulter = &D{}
func (d *D) Default(ctx context.Context, obj runtime.Object) error {
	dep, ok := obj.(*appsv1.Deployment)
	if !ok {
		return fmt.Errorf("expected a Deployment, got %T", obj)
	}
	dep.Labels = map[string]string{"a": "b"}
	return nil
}
type V struct{}
var _ admission.CustomValidator = &V{}
func (v *V) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {
	dep, ok := obj.(*appsv1.Deployment)
	if !ok {
		return nil, fmt.Errorf("bad")
	}
	return nil, check(dep, obj)
}
func (v *V) ValidateUpdate(ctx context.Context, oldObj, newObj runtime.Object) (admission.Warnings, error) {
	return nil, nil
}
func (v *V) ValidateDelete(ctx context.Context, obj runtime.Object) (admission.Warnings, error) { return nil, nil }
func check(d *appsv1.Deployment, o runtime.Object) error { return nil }
`

func TestWebhookRewrite(t *testing.T) {
	out, rep := migrateSnippet(t, customWebhook)
	for _, w := range []string{
		// Before v0.23, WithDefaulter and WithValidator took the untyped forms.
		"webhook.ManagedBy(mgr, &appsv1.Deployment{}).WithCustomDefaulter(&D{}).WithCustomValidator(&V{}).Complete()",
		"var _ webhook.CustomDefaulter = &D{}",
		"var _ admission.CustomValidator = &V{}",
		// The methods keep their signatures, and so every caller compiles.
		"func (d *D) Default(ctx context.Context, obj runtime.Object) error {",
		"func (v *V) ValidateCreate(ctx context.Context, obj runtime.Object) (admission.Warnings, error) {",
		`"k8s.io/apimachinery/pkg/runtime"`,
	} {
		assert.Contains(t, out, w)
	}
	assert.NotContains(t, out, "controller-runtime")
	assert.NotContains(t, out, "kubeloop-migrate:", "no note")
	assert.Equal(t, 3, rep.rewrites[kindWebhook], "the builder and two methods")

	again, _ := migrateSnippet(t, out)
	assert.Equal(t, out, again)
}

// TestWebhookRewriteNewForm: in NewWebhookManagedBy(mgr, obj) chains
// (v0.23 on), WithDefaulter is typed in both libraries and
// WithCustomDefaulter exists in both: only the entry point changes.
func TestWebhookRewriteNewForm(t *testing.T) {
	give := strings.Replace(customWebhook,
		"ctrl.NewWebhookManagedBy(mgr).For(&appsv1.Deployment{}).WithDefaulter(&D{}).WithValidator(&V{}).Complete()",
		"ctrl.NewWebhookManagedBy(mgr, &appsv1.Deployment{}).WithCustomDefaulter(&D{}).WithCustomValidator(&V{}).Complete()", 1)
	require.NotEqual(t, customWebhook, give)
	out, _ := migrateSnippet(t, give)
	assert.Contains(t, out, "webhook.ManagedBy(mgr, &appsv1.Deployment{}).WithCustomDefaulter(&D{}).WithCustomValidator(&V{}).Complete()")
	typed := strings.Replace(give, "WithCustomDefaulter(&D{}).WithCustomValidator(&V{})", "WithDefaulter(typedD{})", 1)
	out, _ = migrateSnippet(t, typed)
	assert.Contains(t, out, "webhook.ManagedBy(mgr, &appsv1.Deployment{}).WithDefaulter(typedD{}).Complete()")
}

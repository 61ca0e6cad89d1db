package main

// The rules are MIGRATING.md as data: where each controller-runtime import
// path and name lives in kubeloop, and what to do where no mechanical
// rewrite is safe. rules_test.go checks every target against kubeloop's
// own source, so a rule cannot name something kubeloop does not have.

const (
	crModule = "sigs.k8s.io/controller-runtime"
	klModule = "github.com/kubeloop/kubeloop"
)

// pkgRule says where one controller-runtime package went.
type pkgRule struct {
	// to is the kubeloop package that takes the import path as a whole
	// (the local name is kept); "" when members move one by one or the
	// package has no kubeloop home.
	to string
	// members are the names that live elsewhere, or need a note. A name
	// not listed keeps its name in to.
	members map[string]target
	// note is the manual step for a package without a kubeloop home
	// (to == "" and the name is not in members).
	note string
}

// target is where one controller-runtime name goes.
type target struct {
	path string // import path of the new home; "" keeps the name where it is
	name string // name in path; "" means the same name
	kind string // summary kind of the rewrite

	ptr  bool // an interface that became a concrete type: use *path.name
	call bool // a variable that became a function: path.name()

	// drop, on a struct field, removes the key and value (kubeloop does
	// not need it); note says why. note alone (no path, no drop) leaves
	// the code in place with a manual comment.
	drop bool
	note string
}

func kl(pkg string) string { return klModule + "/" + pkg }

const (
	kindImport   = "import path"
	kindCtrl     = "ctrl alias"
	kindRename   = "renamed identifier"
	kindField    = "option field"
	kindEvent    = "event type"
	kindRecorder = "event recorder"
	kindMetrics  = "metrics server options"
	kindWebhook  = "webhook"
	kindLogger   = "logger"
	kindScheme   = "scheme"
	kindEnvtest  = "envtest"

	kindInterceptor = "interceptor callback"
)

var (
	noteWatchNS  = "use Cache: cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}}"
	notePointers = "kubeloop takes a time.Duration here, not a pointer"
)

// packages maps controller-runtime import paths to their rules.
var packages = map[string]pkgRule{
	crModule: {members: ctrlMembers},

	crModule + "/pkg/builder":            {to: kl("controller/builder"), members: map[string]target{"WebhookManagedBy": {note: "use webhook.ManagedBy(mgr, obj)"}}},
	crModule + "/pkg/cache":              {to: kl("cache")},
	crModule + "/pkg/client":             {to: kl("client"), members: clientMembers},
	crModule + "/pkg/client/apiutil":     {to: kl("client/apiutil")},
	crModule + "/pkg/client/config":      {to: kl("client/config"), members: map[string]target{"RegisterFlags": {note: "kubeloop registers no flags: define --kubeconfig yourself and use config.Load(path)"}}},
	crModule + "/pkg/client/fake":        {to: kl("client/fake")},
	crModule + "/pkg/client/interceptor": {to: kl("client/interceptor")},
	crModule + "/pkg/controller": {to: kl("controller"), members: map[string]target{
		"Controller": {path: kl("controller"), ptr: true, kind: kindRename},
	}},
	crModule + "/pkg/controller/controllerutil": {to: kl("controller/controllerutil")},
	crModule + "/pkg/envtest":                   {to: kl("envtest")},
	crModule + "/pkg/event":                     {members: eventMembers()},
	crModule + "/pkg/envtest/komega":            {to: kl("envtest/komega")},
	crModule + "/pkg/handler":                   {to: kl("handler")},
	crModule + "/pkg/healthz":                   {to: kl("manager/healthz")},
	crModule + "/pkg/log":                       {to: kl("log"), members: logMembers},
	crModule + "/pkg/manager": {to: kl("manager"), members: map[string]target{
		"Manager": {path: kl("manager"), ptr: true, kind: kindRename},
	}},
	crModule + "/pkg/manager/signals": {to: kl("manager/signals")},
	crModule + "/pkg/predicate":       {to: kl("handler/predicate")},
	crModule + "/pkg/reconcile": {to: kl("reconcile"), members: map[string]target{
		"AsReconciler": {path: kl("controller"), kind: kindRename},
	}},
	crModule + "/pkg/scheme": {to: kl("scheme")},
	crModule + "/pkg/source": {to: kl("controller/source")},
	crModule + "/pkg/webhook": {to: kl("webhook"), members: map[string]target{
		"Server":        {path: kl("webhook"), ptr: true, kind: kindRename},
		"DefaultServer": {path: kl("webhook"), name: "Server", kind: kindRename},
	}},
	crModule + "/pkg/webhook/admission": {to: kl("webhook/admission")},
	crModule + "/pkg/webhook/conversion": {to: kl("webhook/conversion"), members: map[string]target{
		"NewWebhookHandler": {path: kl("webhook/conversion"), name: "NewWebhook", kind: kindRename},
	}},
	crModule + "/pkg/metrics/server": {members: map[string]target{
		"Options": {path: kl("manager"), name: "MetricsOptions", kind: kindMetrics},
		"Filter":  {path: kl("manager"), name: "MetricsFilter", kind: kindMetrics},
	}, note: "the metrics server is part of kubeloop's manager (manager.MetricsOptions)"},
	crModule + "/pkg/metrics/filters": {members: map[string]target{
		"WithAuthenticationAndAuthorization": {path: kl("manager"), kind: kindMetrics},
	}, note: "the metrics filters are in kubeloop's manager package"},

	crModule + "/pkg/metrics":     {to: kl("metrics")},
	crModule + "/pkg/certwatcher": {to: kl("certwatcher")},
	crModule + "/pkg/config":      {to: kl("config")},
	crModule + "/pkg/conversion":  {to: kl("webhook/conversion")},
	// A package that uses pkg/log/zap's go.uber.org/zap types (NewRaw,
	// RawZapOpts, Encoder, ZapOpts, ...) gets zaprawRule instead (zapraw.go).
	crZap:                            {to: kl("log/zap")},
	crModule + "/pkg/cluster":        {note: "kubeloop has no cluster package: a manager per cluster (manager.New) gives the same client, cache and mapper"},
	crModule + "/pkg/leaderelection": {note: "use kubeloop's leaderelection.New(cfg, leaderelection.Options) or the manager's LeaderElection options"},
}

// ctrlMembers is the ctrl alias package (sigs.k8s.io/controller-runtime):
// each name goes to the kubeloop package it lives in.
var ctrlMembers = map[string]target{
	"Builder":                {path: kl("controller/builder"), kind: kindCtrl},
	"Request":                {path: kl("reconcile"), kind: kindCtrl},
	"Result":                 {path: kl("reconcile"), kind: kindCtrl},
	"Manager":                {path: kl("manager"), ptr: true, kind: kindCtrl},
	"Options":                {path: kl("manager"), kind: kindCtrl},
	"NewManager":             {path: kl("manager"), name: "New", kind: kindCtrl},
	"NewControllerManagedBy": {path: kl("controller/builder"), name: "ControllerManagedBy", kind: kindCtrl},
	"GetConfig":              {path: kl("client/config"), kind: kindCtrl},
	"GetConfigOrDie":         {path: kl("client/config"), kind: kindCtrl},
	"CreateOrUpdate":         {path: kl("controller/controllerutil"), kind: kindCtrl},
	"CreateOrPatch":          {path: kl("controller/controllerutil"), kind: kindCtrl},
	"SetControllerReference": {path: kl("controller/controllerutil"), kind: kindCtrl},
	"SetupSignalHandler":     {path: kl("manager/signals"), kind: kindCtrl},
	"SchemeBuilder":          {path: kl("scheme"), name: "Builder", kind: kindCtrl},
	"GroupVersion":           {path: "k8s.io/apimachinery/pkg/runtime/schema", kind: kindCtrl},
	"GroupResource":          {path: "k8s.io/apimachinery/pkg/runtime/schema", kind: kindCtrl},
	"TypeMeta":               {path: "k8s.io/apimachinery/pkg/apis/meta/v1", kind: kindCtrl},
	"ObjectMeta":             {path: "k8s.io/apimachinery/pkg/apis/meta/v1", kind: kindCtrl},
	"Log":                    {path: kl("log"), name: "Default", call: true, kind: kindLogger},
	"LoggerFrom":             {path: kl("log"), name: "FromContext", kind: kindLogger},
	"LoggerInto":             {path: kl("log"), name: "IntoContext", kind: kindLogger},
	"NewWebhookManagedBy":    {note: "use webhook.ManagedBy(mgr, obj) (the webhook rewrite does this for NewWebhookManagedBy(mgr).For(obj))"},
	"RegisterFlags":          {note: "kubeloop registers no flags: define --kubeconfig yourself and use config.Load(path)"},
}

var logMembers = map[string]target{
	"Log":                  {path: kl("log"), name: "Default", call: true, kind: kindLogger},
	"NullLogSink":          {note: "use logr.Discard()"},
	"NewDelegatingLogSink": {note: "not needed: log.Default() follows slog.SetDefault"},
}

var clientMembers = map[string]target{
	// NewNamespacedClient, WithFieldOwner, NewDryRunClient, NewWithWatch
	// and WithWatch keep their names and signatures (the import path is
	// rewritten; interceptor.Funcs callbacks are rewritten to take
	// client.Client, see interceptors.go).
	"WithFieldValidation": {note: "not in kubeloop: pass client.FieldValidation(...) to each write"},
}

// eventMembers: pkg/event's types are in kubeloop's handler package.
func eventMembers() map[string]target {
	m := map[string]target{}
	for _, n := range []string{"CreateEvent", "UpdateEvent", "DeleteEvent", "GenericEvent"} {
		m[n] = target{path: kl("handler"), kind: kindEvent}
		m["Typed"+n] = target{path: kl("handler"), kind: kindEvent}
	}
	return m
}

// fieldRule is what happens to one field of a controller-runtime struct in
// a composite literal (Type{Field: value}) or an assignment (x.Field = v).
type fieldRule struct {
	rename string // the kubeloop field name
	drop   bool   // remove the key and value; note says why
	deref  bool   // the value was a pointer: &x becomes x
	note   string // a manual step (with drop: what was dropped)
}

// fields is keyed by controller-runtime import path and type name.
var fields = map[string]map[string]fieldRule{
	crModule + ".Options":             managerFields,
	crModule + "/pkg/manager.Options": managerFields,
	crModule + "/pkg/client/interceptor.Funcs": {
		"SubResource": {note: "kubeloop's interceptor.Funcs has no SubResource: intercept SubResourceGet, SubResourceCreate, SubResourceUpdate, SubResourcePatch and SubResourceApply"},
	},
	crModule + "/pkg/controller.Options": {
		"ReconciliationTimeout": {rename: "ReconcileTimeout"},
		"UsePriorityQueue":      {drop: true, note: "dropped UsePriorityQueue: kubeloop's queue always has priorities"},
		"EnableWarmup":          {drop: true, note: "dropped EnableWarmup: kubeloop requests informers when the controller is built"},
		"NewQueue":              {note: "kubeloop's controller builds its own workqueue.Queue; remove NewQueue"},
	},
	crModule + "/pkg/client.Options": {
		"DryRun":          {note: "not offered: wrap the client with client.NewDryRunClient(c), or pass client.DryRunAll to each write"},
		"FieldValidation": {note: "not offered: pass client.FieldValidation(...) to each write"},
		"WarningHandler":  {note: "not offered: client-go's rest.Config.WarningHandler"},
	},
	crModule + "/pkg/webhook.Options": {
		"WebhookMux":   {note: "not offered: register handlers with server.Register"},
		"ClientCAName": {note: "not offered: check client certificates in TLSOpts"},
	},
}

var managerFields = map[string]fieldRule{
	"LeaseDuration":              {deref: true, note: notePointers},
	"RenewDeadline":              {deref: true, note: notePointers},
	"RetryPeriod":                {deref: true, note: notePointers},
	"GracefulShutdownTimeout":    {deref: true, note: notePointers},
	"LeaderElectionResourceLock": {drop: true, note: "dropped LeaderElectionResourceLock: kubeloop always uses a Lease"},
	"Namespace":                  {note: noteWatchNS},
	"MetricsBindAddress":         {note: "use Metrics: manager.MetricsOptions{BindAddress: ...}"},
	"Port":                       {note: "use WebhookServer: webhook.NewServer(webhook.Options{Port: ...})"},
	"NewClient":                  {note: "not offered: configure the client with Options.Client"},
	"NewCache":                   {note: "not offered: configure the cache with Options.Cache (a NewCache that sets opts.DefaultNamespaces and calls cache.New is Options.Cache.DefaultNamespaces)"},
	"BaseContext":                {note: "not offered: Start's context is the base"},
}

// methodNotes are method names whose calls need a manual step wherever
// they appear in a migrated package.
var methodNotes = map[string]string{
	"AnnotatedEventf":              "events.k8s.io recorders have no AnnotatedEventf: use Eventf and set annotations elsewhere",
	"AddMetricsServerExtraHandler": "use manager.Options{Metrics: manager.MetricsOptions{ExtraHandlers: ...}}",
}

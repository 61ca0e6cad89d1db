package main

import (
	"go/format"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTwinRules checks the rules for the packages and names kubeloop now
// has under controller-runtime's names: each input migrates to exactly
// the wanted output, and a second run changes nothing.
func TestTwinRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		give  string
		want  string
		kinds map[string]int
	}{
		{
			name: "import paths of the new twins",
			give: `package x

import (
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/controller-runtime/pkg/envtest/komega"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	w, _ = certwatcher.New("tls.crt", "tls.key")
	c    = config.Controller{MaxConcurrentReconciles: 2}
	_    conversion.Hub
	_    = komega.Get
	l    = zap.New(zap.UseDevMode(true))
	_    = metrics.Registry
)
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/certwatcher"
	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/envtest/komega"
	"github.com/kubeloop/kubeloop/log/zap"
	"github.com/kubeloop/kubeloop/metrics"
	"github.com/kubeloop/kubeloop/webhook/conversion"
)

var (
	w, _ = certwatcher.New("tls.crt", "tls.key")
	c    = config.Controller{MaxConcurrentReconciles: 2}
	_    conversion.Hub
	_    = komega.Get
	l    = zap.New(zap.UseDevMode(true))
	_    = metrics.Registry
)
`,
			kinds: map[string]int{kindImport: 6},
		},
		{
			name: "pkg/conversion and pkg/webhook/conversion in one file become one import",
			give: `package x

import (
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	whconv "sigs.k8s.io/controller-runtime/pkg/webhook/conversion"
)

var _ conversion.Convertible
var h = whconv.NewWebhookHandler
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/webhook/conversion"
)

var _ conversion.Convertible
var h = conversion.NewWebhook
`,
		},
		{
			name: "typed events move to handler like the others",
			give: `package x

import (
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

var p = predicate.TypedFuncs[*corev1.Pod]{
	CreateFunc: func(e event.TypedCreateEvent[*corev1.Pod]) bool { return true },
	UpdateFunc: func(e event.TypedUpdateEvent[*corev1.Pod]) bool { return e.ObjectNew != nil },
}

var h handler.TypedEventHandler[*corev1.Pod, reconcile.Request] = &handler.TypedEnqueueRequestForObject[*corev1.Pod]{}

func f(e event.TypedDeleteEvent[*corev1.Pod], g event.TypedGenericEvent[*corev1.Pod]) {
	_ = source.TypedKind[*corev1.Pod, reconcile.Request]
}
`,
			want: `package x

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/reconcile"
)

var p = predicate.TypedFuncs[*corev1.Pod]{
	CreateFunc: func(e handler.TypedCreateEvent[*corev1.Pod]) bool { return true },
	UpdateFunc: func(e handler.TypedUpdateEvent[*corev1.Pod]) bool { return e.ObjectNew != nil },
}

var h handler.TypedEventHandler[*corev1.Pod, reconcile.Request] = &handler.TypedEnqueueRequestForObject[*corev1.Pod]{}

func f(e handler.TypedDeleteEvent[*corev1.Pod], g handler.TypedGenericEvent[*corev1.Pod]) {
	_ = source.TypedKind[*corev1.Pod, reconcile.Request]
}
`,
			kinds: map[string]int{kindEvent: 4},
		},
		{
			name: "zapcore levels, Level(n) and time encoders go to kubeloop's zap",
			give: `package main

import (
	"flag"

	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	opts := zap.Options{
		Development:     true,
		Level:           zapcore.Level(-2),
		StacktraceLevel: zapcore.ErrorLevel,
		TimeEncoder:     zapcore.ISO8601TimeEncoder,
	}
	opts.BindFlags(flag.CommandLine)
	_ = zap.New(zap.UseFlagOptions(&opts), zap.Level(zapcore.DebugLevel))
}
`,
			want: `package main

import (
	"flag"

	"github.com/kubeloop/kubeloop/log/zap"
)

func main() {
	opts := zap.Options{
		Development:     true,
		Level:           zap.LevelValue(-2),
		StacktraceLevel: zap.ErrorLevel,
		TimeEncoder:     zap.ISO8601TimeEncoder,
	}
	opts.BindFlags(flag.CommandLine)
	_ = zap.New(zap.UseFlagOptions(&opts), zap.Level(zap.DebugLevel))
}
`,
			kinds: map[string]int{kindLogger: 4},
		},
		{
			name: "go.uber.org/zap beside pkg/log/zap takes the package to zapraw, where zapcore's values stay",
			give: `package main

import (
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	crzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

var lvl = uberzap.NewAtomicLevelAt(zapcore.DebugLevel)
var enc zapcore.EncoderConfig
var o = crzap.Options{TimeEncoder: zapcore.RFC3339NanoTimeEncoder, Level: zapcore.InfoLevel}
`,
			want: `package main

import (
	crzap "github.com/kubeloop/kubeloop/log/zap/zapraw"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

var lvl = uberzap.NewAtomicLevelAt(zapcore.DebugLevel)
var enc zapcore.EncoderConfig
var o = crzap.Options{TimeEncoder: zapcore.RFC3339NanoTimeEncoder, Level: zapcore.InfoLevel}
`,
			kinds: map[string]int{kindImport: 1, kindLogger: 0},
		},
		{
			name: "zapcore stays inside EncoderConfig options",
			give: `package main

import (
	"go.uber.org/zap/zapcore"
	logzap "sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func iso(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.ISO8601TimeEncoder }

var opts = logzap.Options{TimeEncoder: zapcore.ISO8601TimeEncoder, EncoderConfigOptions: []logzap.EncoderConfigOption{iso}}

func f(o *logzap.Options) {
	o.EncoderConfigOptions = append(o.EncoderConfigOptions, func(config *zapcore.EncoderConfig) {
		config.EncodeLevel = zapcore.CapitalLevelEncoder
		config.EncodeTime = zapcore.RFC3339TimeEncoder
	})
	_ = logzap.ConsoleEncoder(func(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.EpochTimeEncoder })
}
`,
			want: `package main

import (
	logzap "github.com/kubeloop/kubeloop/log/zap"
	"go.uber.org/zap/zapcore"
)

func iso(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.ISO8601TimeEncoder }

var opts = logzap.Options{TimeEncoder: logzap.ISO8601TimeEncoder, EncoderConfigOptions: []logzap.EncoderConfigOption{iso}}

func f(o *logzap.Options) {
	o.EncoderConfigOptions = append(o.EncoderConfigOptions, func(config *zapcore.EncoderConfig) {
		config.EncodeLevel = zapcore.CapitalLevelEncoder
		config.EncodeTime = zapcore.RFC3339TimeEncoder
	})
	_ = logzap.ConsoleEncoder(func(c *zapcore.EncoderConfig) { c.EncodeTime = zapcore.EpochTimeEncoder })
}
`,
			kinds: map[string]int{kindLogger: 1},
		},
		{
			name: "envtest: typed CRDs are wrapped with CRDsOf, AddUser(user, base) becomes AddAuthenticatedUser",
			give: `package x

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

func crds() []*apiextensionsv1.CustomResourceDefinition { return nil }

var env = &envtest.Environment{CRDs: crds(), CRDInstallOptions: envtest.CRDInstallOptions{CRDs: crds()}}

func f() {
	u, _ := env.AddUser(envtest.User{Name: "no-access"}, nil)
	_ = u.Config()
}
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/envtest"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func crds() []*apiextensionsv1.CustomResourceDefinition { return nil }

var env = &envtest.Environment{CRDs: envtest.CRDsOf(crds()), CRDInstallOptions: envtest.CRDInstallOptions{CRDs: envtest.CRDsOf(crds())}}

func f() {
	u, _ := env.AddAuthenticatedUser(envtest.User{Name: "no-access"}, nil)
	_ = u.Config()
}
`,
			kinds: map[string]int{kindEnvtest: 3},
		},
		{
			name: "field rules apply to assignments to a variable of the type",
			give: `package main

import (
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func main() {
	options := ctrl.Options{LeaderElection: true}
	options.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) { return cache.New(config, opts) }
	d := time.Second
	options.LeaseDuration = &d
	other := struct{ NewCache int }{}
	other.NewCache = 1
	_, _ = ctrl.NewManager(nil, options)
}
`,
			want: `package main

import (
	"time"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/manager"
	"k8s.io/client-go/rest"
)

func main() {
	options := manager.Options{LeaderElection: true}
	// kubeloop-migrate: NewCache: not offered: configure the cache with Options.Cache (a NewCache that sets opts.DefaultNamespaces and calls cache.New is Options.Cache.DefaultNamespaces)
	options.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) { return cache.New(config, opts) }
	d := time.Second
	options.LeaseDuration = d
	other := struct{ NewCache int }{}
	other.NewCache = 1
	_, _ = manager.New(nil, options)
}
`,
			kinds: map[string]int{kindCtrl: 2},
		},
		{
			name: "the NewCache idiom for some namespaces becomes the manager's cache options",
			give: `package main

import (
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

func main() {
	namespaceMap := map[string]cache.Config{"a": {}}
	options := ctrl.Options{LeaderElection: true}
	if len(namespaceMap) > 0 {
		options.NewCache = func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
			opts.DefaultNamespaces = namespaceMap
			return cache.New(config, opts)
		}
	}
	other := ctrl.Options{NewCache: func(cfg *rest.Config, o cache.Options) (cache.Cache, error) {
		o.DefaultNamespaces = namespaceMap
		return cache.New(cfg, o)
	}}
	kept := ctrl.Options{NewCache: func(cfg *rest.Config, o cache.Options) (cache.Cache, error) {
		o.DefaultNamespaces = map[string]cache.Config{cfg.Host: {}}
		return cache.New(cfg, o)
	}}
	_, _, _ = options, other, kept
}
`,
			want: `package main

import (
	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/manager"
	"k8s.io/client-go/rest"
)

func main() {
	namespaceMap := map[string]cache.Config{"a": {}}
	options := manager.Options{LeaderElection: true}
	if len(namespaceMap) > 0 {
		options.Cache.DefaultNamespaces = namespaceMap
	}
	other := manager.Options{Cache: cache.Options{DefaultNamespaces: namespaceMap}}
	// kubeloop-migrate: NewCache: not offered: configure the cache with Options.Cache (a NewCache that sets opts.DefaultNamespaces and calls cache.New is Options.Cache.DefaultNamespaces)
	kept := manager.Options{NewCache: func(cfg *rest.Config, o cache.Options) (cache.Cache, error) {
		o.DefaultNamespaces = map[string]cache.Config{cfg.Host: {}}
		return cache.New(cfg, o)
	}}
	_, _, _ = options, other, kept
}
`,
			kinds: map[string]int{kindField: 2},
		},
		{
			name: "zapcore is not touched in a file without controller-runtime's zap",
			give: `package x

import (
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

var _ client.Client
var l = zapcore.DebugLevel
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/client"
	"go.uber.org/zap/zapcore"
)

var _ client.Client
var l = zapcore.DebugLevel
`,
		},
		{
			name: "zap's go.uber.org/zap-typed names take the package to zapraw, with no notes",
			give: `package main

import (
	"go.uber.org/zap/zapcore"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

var enc zapcore.Encoder

var o = zap.Options{Encoder: enc, ZapOpts: nil, EncoderConfigOptions: nil, NewEncoder: nil}

func f() {
	_ = zap.New(zap.Encoder(enc), zap.RawZapOpts(), zap.ConsoleEncoder(func(*zapcore.EncoderConfig) {}), zap.JSONEncoder())
}
`,
			want: `package main

import (
	zap "github.com/kubeloop/kubeloop/log/zap/zapraw"
	"go.uber.org/zap/zapcore"
)

var enc zapcore.Encoder

var o = zap.Options{Encoder: enc, ZapOpts: nil, EncoderConfigOptions: nil, NewEncoder: nil}

func f() {
	_ = zap.New(zap.Encoder(enc), zap.RawZapOpts(), zap.ConsoleEncoder(func(*zapcore.EncoderConfig) {}), zap.JSONEncoder())
}
`,
		},
		{
			name: "interceptor callbacks take client.Client",
			give: `package x

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func failingGet(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.Get(ctx, key, obj, opts...)
}

func other(c client.WithWatch) {}

var c = fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
	Get: failingGet,
	Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
		return nil
	},
}).Build()
`,
			want: `package x

import (
	"context"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/client/interceptor"
)

func failingGet(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.Get(ctx, key, obj, opts...)
}

func other(c client.WithWatch) {}

var c = fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
	Get: failingGet,
	Create: func(ctx context.Context, c client.Client, obj client.Object, opts ...client.CreateOption) error {
		return nil
	},
}).Build()
`,
			kinds: map[string]int{kindInterceptor: 2},
		},
		{
			name: "webhook.Admission, Result.Requeue, manager Controller options and cache namespace maps need only import paths",
			give: `package x

import (
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

var h admission.Handler

var wh = &webhook.Admission{Handler: h}

var o = ctrl.Options{
	Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	Cache: cache.Options{
		DefaultNamespaces: map[string]cache.Config{"a": {}, cache.AllNamespaces: {}},
		ByObject:          map[client.Object]cache.ByObject{nil: {Namespaces: map[string]cache.Config{"b": {}}}},
	},
	WebhookServer: webhook.NewServer(webhook.Options{Port: -1}),
}

var d = admission.NewDecoder(nil)

func f() (ctrl.Result, error) { return ctrl.Result{Requeue: true, Priority: ptr.To(1)}, nil }
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/config"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/webhook"
	"github.com/kubeloop/kubeloop/webhook/admission"
	"k8s.io/utils/ptr"
)

var h admission.Handler

var wh = &webhook.Admission{Handler: h}

var o = manager.Options{
	Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	Cache: cache.Options{
		DefaultNamespaces: map[string]cache.Config{"a": {}, cache.AllNamespaces: {}},
		ByObject:          map[client.Object]cache.ByObject{nil: {Namespaces: map[string]cache.Config{"b": {}}}},
	},
	WebhookServer: webhook.NewServer(webhook.Options{Port: -1}),
}

var d = admission.NewDecoder(nil)

func f() (reconcile.Result, error) { return reconcile.Result{Requeue: true, Priority: ptr.To(1)}, nil }
`,
		},
		{
			name: "envtest keeps DownloadBinaryAssets and the other fields kubeloop now has",
			give: `package x

import "sigs.k8s.io/controller-runtime/pkg/envtest"

var e = &envtest.Environment{
	CRDDirectoryPaths:            []string{"config/crd/bases"},
	BinaryAssetsDirectory:        "bin/k8s",
	DownloadBinaryAssets:         true,
	DownloadBinaryAssetsVersion:  "v1.33.0",
	DownloadBinaryAssetsIndexURL: "https://example.com/index.yaml",
	AttachControlPlaneOutput:     true,
	Scheme:                       nil,
}
`,
			want: `package x

import "github.com/kubeloop/kubeloop/envtest"

var e = &envtest.Environment{
	CRDDirectoryPaths:            []string{"config/crd/bases"},
	BinaryAssetsDirectory:        "bin/k8s",
	DownloadBinaryAssets:         true,
	DownloadBinaryAssetsVersion:  "v1.33.0",
	DownloadBinaryAssetsIndexURL: "https://example.com/index.yaml",
	AttachControlPlaneOutput:     true,
	Scheme:                       nil,
}
`,
		},
		{
			name: "WatchesMetadata is Watches with builder.OnlyMetadata (cert-manager/approver-policy's RBAC watches)",
			give: `package x

import (
	rbacv1 "k8s.io/api/rbac/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func setup(mgr ctrl.Manager, r reconcile.Reconciler, h handler.EventHandler, p predicate.Predicate) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&rbacv1.Role{}).
		WatchesMetadata(&rbacv1.RoleBinding{}, h, p).
		WatchesMetadata(&rbacv1.ClusterRole{}, h).
		Complete(r)
}
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
	rbacv1 "k8s.io/api/rbac/v1"
)

func setup(mgr *manager.Manager, r reconcile.Reconciler, h handler.EventHandler, p predicate.Predicate) error {
	return builder.ControllerManagedBy(mgr).
		For(&rbacv1.Role{}).
		Watches(&rbacv1.RoleBinding{}, h, builder.OnlyMetadata, p).
		Watches(&rbacv1.ClusterRole{}, h, builder.OnlyMetadata).
		Complete(r)
}
`,
			kinds: map[string]int{kindRename: 2},
		},
		{
			name: "pointer durations assigned and compared with nil (kubernetes-sigs/jobset's config loader)",
			give: `package x

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

type leaderElection struct {
	ResourceLock  string
	LeaseDuration metav1.Duration
	RetryPeriod   *time.Duration
}

func addLeaderElectionTo(o *manager.Options, cfg leaderElection) {
	if o.LeaderElectionResourceLock == "" && cfg.ResourceLock != "" {
		o.LeaderElectionResourceLock = cfg.ResourceLock
	}
	if o.LeaseDuration == nil && cfg.LeaseDuration.Duration != 0 {
		o.LeaseDuration = &cfg.LeaseDuration.Duration
	}
	if o.RetryPeriod != nil {
		return
	}
	o.RetryPeriod = cfg.RetryPeriod
	_ = manager.Options{RenewDeadline: nil, GracefulShutdownTimeout: cfg.RetryPeriod}
	_ = *o.LeaseDuration + time.Second
}
`,
			want: `package x

import (
	"time"

	"github.com/kubeloop/kubeloop/manager"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

type leaderElection struct {
	ResourceLock  string
	LeaseDuration metav1.Duration
	RetryPeriod   *time.Duration
}

func addLeaderElectionTo(o *manager.Options, cfg leaderElection) {
	// kubeloop-migrate: LeaderElectionResourceLock: dropped LeaderElectionResourceLock: kubeloop always uses a Lease

	if o.LeaseDuration == 0 && cfg.LeaseDuration.Duration != 0 {
		o.LeaseDuration = cfg.LeaseDuration.Duration
	}
	if o.RetryPeriod != 0 {
		return
	}
	o.RetryPeriod = ptr.Deref(cfg.RetryPeriod, 0)
	_ = manager.Options{RenewDeadline: 0, GracefulShutdownTimeout: ptr.Deref(cfg.RetryPeriod, 0)}
	_ = o.LeaseDuration + time.Second
}
`,
			kinds: map[string]int{kindField: 8},
		},
		{
			name: "webhook.DefaultServer literals are webhook.NewServer (kubernetes-sigs/jobset's expected manager options)",
			give: `package x

import (
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

var want = manager.Options{
	WebhookServer: &ctrlwebhook.DefaultServer{
		Options: ctrlwebhook.Options{Port: 9443},
	},
}

var empty = &ctrlwebhook.DefaultServer{}

func f(s *ctrlwebhook.DefaultServer) ctrlwebhook.DefaultServer { return ctrlwebhook.DefaultServer{} }
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/manager"
	ctrlwebhook "github.com/kubeloop/kubeloop/webhook"
)

var want = manager.Options{
	WebhookServer: ctrlwebhook.NewServer(
		ctrlwebhook.Options{Port: 9443},
	),
}

var empty = ctrlwebhook.NewServer(ctrlwebhook.Options{})

func f(s *ctrlwebhook.Server) ctrlwebhook.Server { return ctrlwebhook.Server{} }
`,
			kinds: map[string]int{kindWebhook: 2, kindRename: 3},
		},
		{
			name: "asserting the concrete DefaultServer and reading its Options (kubernetes-sigs/jobset's TLS test)",
			give: `package x

import (
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
)

func f(options manager.Options, mgr manager.Manager) int {
	webhookServer := options.WebhookServer
	defaultServer, ok := webhookServer.(*webhook.DefaultServer)
	if !ok {
		return len(defaultServer.Options.TLSOpts)
	}
	return mgr.GetWebhookServer().(*webhook.DefaultServer).Options.Port
}
`,
			want: `package x

import (
	"github.com/kubeloop/kubeloop/manager"
)

func f(options manager.Options, mgr *manager.Manager) int {
	webhookServer := options.WebhookServer
	defaultServer, ok := webhookServer, webhookServer != nil
	if !ok {
		return len(defaultServer.Options().TLSOpts)
	}
	return mgr.GetWebhookServer().Options().Port
}
`,
			kinds: map[string]int{kindWebhook: 3},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := format.Source([]byte(tc.want))
			require.NoError(t, err, "the wanted output is Go")
			out, rep := migrateSnippet(t, tc.give)
			assert.Equal(t, string(want), out)
			for k, n := range tc.kinds {
				assert.Equal(t, n, rep.rewrites[k], "rewrites of kind %q", k)
			}
			again, _ := migrateSnippet(t, out)
			assert.Equal(t, out, again, "a second run changes nothing")
		})
	}
}

// TestOneNotePerFileAndSymbol: a symbol used many times in a file gets
// one note, at its first use; the report counts every use.
func TestOneNotePerFileAndSymbol(t *testing.T) {
	var b strings.Builder
	b.WriteString("package x\n\nimport \"sigs.k8s.io/controller-runtime/pkg/client\"\n\nfunc f(c client.Client) {\n")
	for i := 0; i < 87; i++ {
		b.WriteString("\t_ = client.WithFieldValidation(c, \"Strict\")\n")
	}
	b.WriteString("\t_ = client.Options{FieldValidation: \"Strict\"}\n\t_ = client.Options{FieldValidation: \"Warn\"}\n}\n")
	out, rep := migrateSnippet(t, b.String())
	assert.Equal(t, 1, strings.Count(out, "client.WithFieldValidation: not in kubeloop"), out)
	assert.Equal(t, 1, strings.Count(out, "FieldValidation: not offered"), out)
	assert.Equal(t, 87, rep.uses["x.go"][notePrefix+"client.WithFieldValidation: "+clientMembers["WithFieldValidation"].note])
	first := strings.Index(out, "client.WithFieldValidation(c")
	assert.Less(t, strings.Index(out, "// kubeloop-migrate: client.WithFieldValidation"), first, "the note is at the first use")

	again, _ := migrateSnippet(t, out)
	assert.Equal(t, out, again, "a second run adds nothing")
}

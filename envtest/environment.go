package envtest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest/internal/crd"
	"github.com/kubeloop/kubeloop/envtest/internal/pki"
	"github.com/kubeloop/kubeloop/envtest/internal/process"
)

// Environment is one local control plane. The zero value is ready to Start;
// every field is optional. Its fields are controller-runtime's
// envtest.Environment's (a kubebuilder or operator-sdk suite_test.go
// compiles unchanged, CRDs aside) plus kubeloop's Authorization,
// APIServerFlags and StartTimeout.
type Environment struct {
	// ControlPlane configures etcd and kube-apiserver: binary paths,
	// extra flags (ControlPlane.GetAPIServer().Configure().Set(...)),
	// output writers, per-process timeouts. The zero value takes every
	// default.
	ControlPlane ControlPlane
	// Scheme is accepted for controller-runtime's sake, where it decides
	// which CRDs get conversion webhooks; kubeloop installs CRDs as they
	// are written. Nil: Start sets client-go's scheme.Scheme, as
	// controller-runtime does.
	Scheme *runtime.Scheme
	// Config is the cluster's admin config. Start sets it (and returns a
	// copy). With UseExistingCluster, a Config set before Start names the
	// cluster to use; nil means the current kubeconfig.
	Config *rest.Config
	// KubeConfig is Config as a kubeconfig file's bytes, for kubectl or
	// other tools; Start fills it when empty.
	KubeConfig []byte
	// CRDInstallOptions are further CRD sources and how to wait for them
	// (controller-runtime's); Paths and CRDs merge with CRDDirectoryPaths
	// and CRDs. The zero value adds nothing.
	CRDInstallOptions CRDInstallOptions
	// CRDs are installed at Start, which waits until each is served. Each
	// is an apiextensions.k8s.io/v1 CustomResourceDefinition.
	CRDs []*unstructured.Unstructured
	// CRDDirectoryPaths lists YAML files, or directories of *.yaml/*.yml
	// files, whose CustomResourceDefinitions are installed at Start. A
	// path that does not exist is skipped, unless ErrorIfCRDPathMissing.
	CRDDirectoryPaths []string
	// ErrorIfCRDPathMissing makes Start fail when a CRDDirectoryPaths or
	// CRDInstallOptions.Paths entry does not exist. False: such a path is
	// skipped silently, as in controller-runtime (which also lets this
	// field override CRDInstallOptions.ErrorIfPathMissing).
	ErrorIfCRDPathMissing bool
	// WebhookInstallOptions install admission webhook configurations that
	// call a server the test runs locally; Start fills its LocalServing*
	// fields. The zero value installs none.
	WebhookInstallOptions WebhookInstallOptions

	// BinaryAssetsDirectory is one of the places Start looks for etcd and
	// kube-apiserver: a directory holding them, or holding setup-envtest's
	// <version>-<os>-<arch> subfolders (directly or under k8s/; the newest
	// that has both is taken). As in controller-runtime, $KUBEBUILDER_ASSETS
	// comes first (and ControlPlane.*.Path and $TEST_ASSET_ETCD /
	// $TEST_ASSET_KUBE_APISERVER before it, per binary); a place that does
	// not exist or lacks a binary is passed over, then come the `make
	// tools` cache (DefaultBinaryAssetsDirectory), setup-envtest's default
	// directory and /usr/local/kubebuilder/bin. When none holds them, the
	// error lists every place and what each lacked. Empty: not searched.
	BinaryAssetsDirectory string
	// DownloadBinaryAssets is accepted for controller-runtime's sake, but
	// nothing is downloaded here: the binaries come from the places
	// BinaryAssetsDirectory lists (build them with `make tools`, or
	// fetch them with setup-envtest). True only adds a hint to the error
	// when none is found.
	DownloadBinaryAssets bool
	// DownloadBinaryAssetsVersion is the version preferred among
	// setup-envtest's version subfolders ("1.31.0" or "v1.31.0"); a
	// missing one is not downloaded. Empty means the newest.
	DownloadBinaryAssetsVersion string
	// DownloadBinaryAssetsIndexURL is accepted and unused: nothing is
	// downloaded.
	DownloadBinaryAssetsIndexURL string

	// UseExistingCluster starts no process: Start connects to the cluster
	// of Config, or of the current kubeconfig ($KUBECONFIG, ~/.kube/config,
	// in-cluster) when Config is nil, and installs CRDs and webhook
	// configurations there; Stop deletes those Start created (never ones
	// that existed before). Nil means the environment variable
	// USE_EXISTING_CLUSTER=true decides, as in controller-runtime.
	UseExistingCluster *bool
	// ControlPlaneStartTimeout bounds how long etcd, and then
	// kube-apiserver, may each take to become ready; 0 means
	// $KUBEBUILDER_CONTROLPLANE_START_TIMEOUT (a time.ParseDuration string),
	// else no bound of its own (StartTimeout still bounds Start).
	ControlPlaneStartTimeout time.Duration
	// ControlPlaneStopTimeout bounds how long each process may take to
	// exit once killed; 0 means $KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT,
	// else 10 s.
	ControlPlaneStopTimeout time.Duration
	// AttachControlPlaneOutput copies the processes' output to os.Stdout
	// and os.Stderr (where ControlPlane's Out and Err are nil); false
	// means $KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT=true decides. Either
	// way Start keeps the last lines of each for its errors.
	AttachControlPlaneOutput bool

	// Authorization is the API server's authorization mode: "" or "RBAC"
	// enforces roles, as controller-runtime's envtest does (the admin
	// config Start returns is in system:masters, so only users from
	// AddUser are limited); "AlwaysAllow" lets every authenticated user do
	// anything.
	Authorization string
	// APIServerFlags are added to kube-apiserver's command line, after the
	// Environment's own and ControlPlane's (a later flag wins).
	APIServerFlags []string
	// StartTimeout bounds Start and StartAPIServer; 0 means 60 s, or more
	// when ControlPlaneStartTimeout asks for more.
	StartTimeout time.Duration

	mu          sync.Mutex
	started     bool
	existing    bool     // started on an existing cluster
	createdCRDs []string // CRDs Start and InstallCRDs created
	installed   []string // every CRD Start installed, for CleanUpAfterUse
	timeouts    timeouts
	dir         string
	ca          *pki.Authority
	etcd        *process.Process
	apiserver   *process.Process
	etcdURL     string
	apiPort     int
	adminCert   []byte
	adminKey    []byte
	config      *rest.Config
}

// User is an identity that AddUser issues a client certificate for.
type User struct {
	// Name is the user name the API server sees.
	Name string
	// Groups are the user's groups.
	Groups []string
}

func (e *Environment) startTimeout() time.Duration {
	if e.StartTimeout > 0 {
		return e.StartTimeout
	}
	return max(60*time.Second, e.timeouts.etcdStart+e.timeouts.apiStart+30*time.Second)
}

// Start starts etcd and kube-apiserver (or, with UseExistingCluster,
// connects to an existing cluster), installs the CRDs and webhook
// configurations, sets Config, KubeConfig and Scheme, and returns a copy of
// the admin config. On error everything started and installed so far is
// stopped and removed.
func (e *Environment) Start() (cfg *rest.Config, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return nil, errors.New("envtest: environment already started")
	}
	e.started = true
	defer func() {
		if err != nil {
			_ = e.stopLocked()
		}
	}()
	if e.timeouts, err = e.resolveTimeouts(); err != nil {
		return nil, err
	}
	// Manifests are read first, so that a missing path or a bad file fails
	// before any process starts.
	crds, err := e.loadCRDs()
	if err != nil {
		return nil, err
	}
	webhooks, err := e.WebhookInstallOptions.load()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.startTimeout())
	defer cancel()
	if e.useExistingCluster() {
		e.existing = true
		if e.config, err = existingClusterConfig(e.Config); err != nil {
			return nil, err
		}
	} else if err = e.startControlPlane(ctx); err != nil {
		return nil, err
	}
	crdCtx := ctx
	if d := e.CRDInstallOptions.MaxTime; d > 0 {
		var cancelCRDs context.CancelFunc
		crdCtx, cancelCRDs = context.WithTimeout(ctx, d)
		defer cancelCRDs()
	}
	e.createdCRDs, err = crd.Install(crdCtx, e.config, crds, e.CRDInstallOptions.PollInterval)
	if err != nil {
		return nil, err
	}
	e.installed = crd.Names(crds)
	if err = e.WebhookInstallOptions.install(ctx, e.config, webhooks); err != nil {
		return nil, err
	}
	if len(e.KubeConfig) == 0 {
		if e.KubeConfig, err = kubeConfigFromREST(e.config); err != nil {
			return nil, err
		}
	}
	if e.Scheme == nil {
		e.Scheme = scheme.Scheme
	}
	e.Config = rest.CopyConfig(e.config)
	return rest.CopyConfig(e.config), nil
}

// startControlPlane starts etcd and kube-apiserver and waits until the
// default namespace exists.
func (e *Environment) startControlPlane(ctx context.Context) (err error) {
	bins, err := e.findBinaries()
	if err != nil {
		return err
	}
	if e.dir, err = os.MkdirTemp("", "kubeloop-envtest-"); err != nil {
		return fmt.Errorf("envtest: temporary directory: %w", err)
	}

	if e.ca, err = pki.NewAuthority(); err != nil {
		return err
	}
	if err = e.startEtcd(ctx, bins.etcd); err != nil {
		return err
	}
	if err = e.writeAPIServerFiles(); err != nil {
		return err
	}
	e.apiserver = &process.Process{Name: "kube-apiserver", Path: bins.apiserver}
	if s := e.ControlPlane.APIServer; s != nil {
		e.apiserver.Stdout, e.apiserver.Stderr = s.Out, s.Err
	}
	e.apiserver.Stdout, e.apiserver.Stderr = e.outputs(e.apiserver.Stdout, e.apiserver.Stderr)
	if err = e.startAPIServer(ctx, true); err != nil {
		return err
	}
	return e.waitDefaultNamespace(ctx)
}

// Stop kills both processes, waits for them and removes the temporary
// files; with UseExistingCluster it deletes the CRDs and webhook
// configurations that Start (and InstallCRDs) created instead. It is safe
// to call more than once and after a failed Start.
func (e *Environment) Stop() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stopLocked()
}

func (e *Environment) stopLocked() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), e.startTimeout())
	defer cancel()
	errs = append(errs, e.WebhookInstallOptions.cleanup(ctx, e.config, e.existing))
	if e.existing && e.config != nil {
		remove := e.createdCRDs
		if e.CRDInstallOptions.CleanUpAfterUse {
			remove = crd.MergeNames(e.createdCRDs, e.installed)
		}
		errs = append(errs, crd.Uninstall(ctx, e.config, remove))
	}
	e.createdCRDs, e.installed, e.existing, e.started = nil, nil, false, false
	if e.apiserver != nil {
		errs = append(errs, e.apiserver.Stop(e.timeouts.apiStop))
	}
	if e.etcd != nil {
		errs = append(errs, e.etcd.Stop(e.timeouts.etcdStop))
	}
	if e.dir != "" {
		if err := os.RemoveAll(e.dir); err != nil {
			errs = append(errs, fmt.Errorf("envtest: remove %s: %w", e.dir, err))
		}
	}
	e.dir, e.config, e.apiserver, e.etcd, e.ca = "", nil, nil, nil, nil
	return errors.Join(errs...)
}

// StopAPIServer kills kube-apiserver and leaves etcd running, to simulate an
// API server outage. StartAPIServer brings it back on the same port.
func (e *Environment) StopAPIServer() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiserver == nil {
		return errors.New("envtest: environment not started")
	}
	return e.apiserver.Stop(e.timeouts.apiStop)
}

// StartAPIServer starts kube-apiserver again on its previous port after
// StopAPIServer and waits until it is ready.
func (e *Environment) StartAPIServer() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiserver == nil {
		return errors.New("envtest: environment not started")
	}
	if e.apiserver.Running() {
		return errors.New("envtest: kube-apiserver is already running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.startTimeout())
	defer cancel()
	return e.startAPIServer(ctx, false)
}

// StopEtcd kills etcd and leaves kube-apiserver running, to simulate a
// storage outage: reads and writes fail until StartEtcd. The data stays on
// disk.
func (e *Environment) StopEtcd() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.etcd == nil {
		return errors.New("envtest: environment not started")
	}
	return e.etcd.Stop(e.timeouts.etcdStop)
}

// StartEtcd starts etcd again after StopEtcd, on the same ports and data,
// and waits until it answers its health check. kube-apiserver reconnects
// by itself.
func (e *Environment) StartEtcd() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.etcd == nil {
		return errors.New("envtest: environment not started")
	}
	if e.etcd.Running() {
		return errors.New("envtest: etcd is already running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.startTimeout())
	defer cancel()
	if err := e.etcd.Start(); err != nil {
		return err
	}
	wctx, cancelWait := process.WaitContext(ctx, e.timeouts.etcdStart)
	defer cancelWait()
	return e.etcd.WaitReady(wctx, process.HTTPReady(http.DefaultClient, e.etcdURL+"/health", `"health":"true"`))
}

// PIDs returns the process ids of etcd and kube-apiserver (0 when not
// running), for tests that check no process is left behind.
func (e *Environment) PIDs() (etcd, apiserver int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.etcd != nil {
		etcd = e.etcd.PID()
	}
	if e.apiserver != nil {
		apiserver = e.apiserver.PID()
	}
	return etcd, apiserver
}

// ProcessGone reports whether no process with pid exists.
func ProcessGone(pid int) bool { return process.Gone(pid) }

// AddUser issues a client certificate for u and returns a config that
// authenticates as u. With Authorization "RBAC", u can do only what roles
// bound to it allow.
func (e *Environment) AddUser(u User) (*rest.Config, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.config == nil {
		return nil, errors.New("envtest: environment not started")
	}
	if e.ca == nil {
		return nil, errors.New("envtest: AddUser needs the Environment's own control plane, not an existing cluster")
	}
	if u.Name == "" {
		return nil, errors.New("envtest: AddUser: user name is empty")
	}
	certPEM, keyPEM, err := e.ca.Issue(u.Name, u.Groups, nil)
	if err != nil {
		return nil, err
	}
	cfg := rest.CopyConfig(e.config)
	cfg.CertData, cfg.KeyData = certPEM, keyPEM
	return cfg, nil
}

func (e *Environment) startEtcd(ctx context.Context, path string) error {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		clientPort, err := process.FreePort()
		if err != nil {
			return err
		}
		peerPort, err := process.FreePort()
		if err != nil {
			return err
		}
		clientURL := "http://127.0.0.1:" + itoa(clientPort)
		peerURL := "http://127.0.0.1:" + itoa(peerPort)
		e.etcd = &process.Process{Name: "etcd", Path: path, Args: []string{
			"--name=default",
			"--data-dir=" + filepath.Join(e.dir, "etcd"),
			"--listen-client-urls=" + clientURL,
			"--advertise-client-urls=" + clientURL,
			"--listen-peer-urls=" + peerURL,
			"--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=default=" + peerURL,
			"--unsafe-no-fsync=true",
			"--log-level=warn",
		}}
		if s := e.ControlPlane.Etcd; s != nil {
			e.etcd.Args = append(s.args.apply(e.etcd.Args), s.Args...)
			e.etcd.Stdout, e.etcd.Stderr = s.Out, s.Err
		}
		e.etcd.Stdout, e.etcd.Stderr = e.outputs(e.etcd.Stdout, e.etcd.Stderr)
		if err := e.etcd.Start(); err != nil {
			return err
		}
		wctx, cancelWait := process.WaitContext(ctx, e.timeouts.etcdStart)
		lastErr = e.etcd.WaitReady(wctx, process.HTTPReady(http.DefaultClient, clientURL+"/health", `"health":"true"`))
		cancelWait()
		if lastErr == nil {
			e.etcdURL = clientURL
			return nil
		}
		inUse := e.etcd.AddressInUse()
		_ = e.etcd.Stop(5 * time.Second)
		if !inUse {
			return lastErr
		}
	}
	return fmt.Errorf("envtest: etcd ports kept being taken: %w", lastErr)
}

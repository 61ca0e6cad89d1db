package envtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
)

// Environment is one local control plane. The zero value is ready to Start;
// every field is optional.
type Environment struct {
	// CRDs are installed at Start, which waits until each is served. Each
	// is an apiextensions.k8s.io/v1 CustomResourceDefinition.
	CRDs []*unstructured.Unstructured
	// CRDDirectoryPaths lists YAML files, or directories of *.yaml/*.yml
	// files, whose CustomResourceDefinitions are installed at Start. A
	// path that does not exist is skipped, unless ErrorIfCRDPathMissing.
	CRDDirectoryPaths []string
	// ErrorIfCRDPathMissing makes Start fail when a CRDDirectoryPaths
	// entry does not exist. False: such a path is skipped silently, as in
	// controller-runtime.
	ErrorIfCRDPathMissing bool
	// WebhookInstallOptions install admission webhook configurations that
	// call a server the test runs locally; Start fills its LocalServing*
	// fields. The zero value installs none.
	WebhookInstallOptions WebhookInstallOptions
	// BinaryAssetsDirectory holds etcd and kube-apiserver. Empty means
	// $KUBEBUILDER_ASSETS when that directory holds both (setup-envtest's
	// layout), else DefaultBinaryAssetsDirectory().
	BinaryAssetsDirectory string
	// UseExistingCluster starts no process: Start connects to the cluster
	// of ExistingClusterConfig, or of the current kubeconfig ($KUBECONFIG,
	// ~/.kube/config, in-cluster) when that is nil, and installs CRDs and
	// webhook configurations there; Stop deletes those Start created (never
	// ones that existed before). Nil means the environment variable
	// USE_EXISTING_CLUSTER=true decides, as in controller-runtime.
	UseExistingCluster *bool
	// ExistingClusterConfig is the cluster UseExistingCluster connects
	// to; nil means the current kubeconfig. (controller-runtime's
	// Environment.Config field; here Config() returns the config in use.)
	ExistingClusterConfig *rest.Config
	// Authorization is the API server's authorization mode: "" or
	// "AlwaysAllow" lets every authenticated user do anything; "RBAC"
	// enforces roles, for least-privilege tests (the admin config stays in
	// system:masters).
	Authorization string
	// APIServerFlags are added to kube-apiserver's command line, after the
	// Environment's own (a later flag wins).
	APIServerFlags []string
	// StartTimeout bounds Start and StartAPIServer; 0 means 60 s.
	StartTimeout time.Duration

	mu          sync.Mutex
	started     bool
	existing    bool     // started on an existing cluster
	createdCRDs []string // CRDs Start and InstallCRDs created
	dir         string
	ca          *authority
	etcd        *process
	apiserver   *process
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
	return 60 * time.Second
}

// Config returns the admin config of a started Environment, or nil.
func (e *Environment) Config() *rest.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.config == nil {
		return nil
	}
	return rest.CopyConfig(e.config)
}

// Start starts etcd and kube-apiserver (or, with UseExistingCluster,
// connects to an existing cluster), installs the CRDs and webhook
// configurations and returns an admin config. On error everything started
// and installed so far is stopped and removed.
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
		if e.config, err = existingClusterConfig(e.ExistingClusterConfig); err != nil {
			return nil, err
		}
	} else if err = e.startControlPlane(ctx); err != nil {
		return nil, err
	}
	e.createdCRDs, err = installCRDs(ctx, e.config, crds)
	if err != nil {
		return nil, err
	}
	if err = e.WebhookInstallOptions.install(ctx, e.config, webhooks); err != nil {
		return nil, err
	}
	return rest.CopyConfig(e.config), nil
}

// startControlPlane starts etcd and kube-apiserver and waits until the
// default namespace exists.
func (e *Environment) startControlPlane(ctx context.Context) (err error) {
	dir := e.binaryAssetsDirectory()
	etcdPath, err := binaryPath(dir, "etcd")
	if err != nil {
		return err
	}
	apiPath, err := binaryPath(dir, "kube-apiserver")
	if err != nil {
		return err
	}
	if e.dir, err = os.MkdirTemp("", "kubeloop-envtest-"); err != nil {
		return fmt.Errorf("envtest: temporary directory: %w", err)
	}

	if e.ca, err = newAuthority(); err != nil {
		return err
	}
	if err = e.startEtcd(ctx, etcdPath); err != nil {
		return err
	}
	if err = e.writeAPIServerFiles(); err != nil {
		return err
	}
	e.apiserver = &process{name: "kube-apiserver", path: apiPath}
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
		errs = append(errs, uninstallCRDs(ctx, e.config, e.createdCRDs))
	}
	e.createdCRDs, e.existing, e.started = nil, false, false
	if e.apiserver != nil {
		errs = append(errs, e.apiserver.stop(10*time.Second))
	}
	if e.etcd != nil {
		errs = append(errs, e.etcd.stop(10*time.Second))
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
	return e.apiserver.stop(10 * time.Second)
}

// StartAPIServer starts kube-apiserver again on its previous port after
// StopAPIServer and waits until it is ready.
func (e *Environment) StartAPIServer() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.apiserver == nil {
		return errors.New("envtest: environment not started")
	}
	if e.apiserver.running() {
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
	return e.etcd.stop(10 * time.Second)
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
	if e.etcd.running() {
		return errors.New("envtest: etcd is already running")
	}
	ctx, cancel := context.WithTimeout(context.Background(), e.startTimeout())
	defer cancel()
	if err := e.etcd.start(); err != nil {
		return err
	}
	return e.etcd.waitReady(ctx, httpReady(http.DefaultClient, e.etcdURL+"/health", `"health":"true"`))
}

// PIDs returns the process ids of etcd and kube-apiserver (0 when not
// running), for tests that check no process is left behind.
func (e *Environment) PIDs() (etcd, apiserver int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.etcd != nil {
		etcd = e.etcd.pid()
	}
	if e.apiserver != nil {
		apiserver = e.apiserver.pid()
	}
	return etcd, apiserver
}

// ProcessGone reports whether no process with pid exists.
func ProcessGone(pid int) bool { return processGone(pid) }

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
	certPEM, keyPEM, err := e.ca.issue(u.Name, u.Groups, nil)
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
		clientPort, err := freePort()
		if err != nil {
			return err
		}
		peerPort, err := freePort()
		if err != nil {
			return err
		}
		clientURL := "http://127.0.0.1:" + itoa(clientPort)
		peerURL := "http://127.0.0.1:" + itoa(peerPort)
		e.etcd = &process{name: "etcd", path: path, args: []string{
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
		if err := e.etcd.start(); err != nil {
			return err
		}
		lastErr = e.etcd.waitReady(ctx, httpReady(http.DefaultClient, clientURL+"/health", `"health":"true"`))
		if lastErr == nil {
			e.etcdURL = clientURL
			return nil
		}
		inUse := e.etcd.addressInUse()
		_ = e.etcd.stop(5 * time.Second)
		if !inUse {
			return lastErr
		}
	}
	return fmt.Errorf("envtest: etcd ports kept being taken: %w", lastErr)
}

// httpReady returns a check that GETs url and wants status 200 and body
// containing want.
func httpReady(c *http.Client, url, want string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s: %s", url, resp.Status, body)
		}
		if want != "" && !strings.Contains(string(body), want) {
			return fmt.Errorf("%s: unexpected answer %q", url, body)
		}
		return nil
	}
}

// tlsClient returns an HTTP client that trusts the Environment's CA and
// presents the admin certificate.
func (e *Environment) tlsClient() (*http.Client, error) {
	cert, err := tls.X509KeyPair(e.adminCert, e.adminKey)
	if err != nil {
		return nil, fmt.Errorf("envtest: admin key pair: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(e.ca.cert)
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}},
	}, nil
}

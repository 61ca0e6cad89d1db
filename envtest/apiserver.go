package envtest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest/internal/pki"
	"github.com/kubeloop/kubeloop/envtest/internal/process"
)

const adminUser = "kubeloop-admin"

// writeAPIServerFiles writes the serving certificate, the client CA, the
// service account key and the admin client certificate.
func (e *Environment) writeAPIServerFiles() error {
	servingCert, servingKey, err := e.ca.Issue("kube-apiserver", nil, []string{"127.0.0.1", "localhost"})
	if err != nil {
		return err
	}
	saKey, err := pki.ServiceAccountKey()
	if err != nil {
		return err
	}
	if e.adminCert, e.adminKey, err = e.ca.Issue(adminUser, []string{"system:masters"}, nil); err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		"ca.crt": e.ca.CertPEM, "apiserver.crt": servingCert, "apiserver.key": servingKey, "sa.key": saKey,
	} {
		if err := writeFile(filepath.Join(e.dir, name), data); err != nil {
			return err
		}
	}
	return nil
}

func (e *Environment) apiServerArgs(port int) []string {
	authz := e.Authorization
	if authz == "" {
		authz = "RBAC"
	}
	url := "https://127.0.0.1:" + itoa(port)
	args := []string{
		"--etcd-servers=" + e.etcdURL,
		"--etcd-prefix=/registry",
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + itoa(port),
		"--endpoint-reconciler-type=none",
		"--cert-dir=" + filepath.Join(e.dir, "certs"),
		"--tls-cert-file=" + filepath.Join(e.dir, "apiserver.crt"),
		"--tls-private-key-file=" + filepath.Join(e.dir, "apiserver.key"),
		"--client-ca-file=" + filepath.Join(e.dir, "ca.crt"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=" + url,
		"--service-account-key-file=" + filepath.Join(e.dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(e.dir, "sa.key"),
		"--disable-admission-plugins=ServiceAccount",
		"--authorization-mode=" + authz,
		"--shutdown-delay-duration=0s",
		"--allow-privileged=true",
		// sharding's server-side mode lists and watches with a
		// shardSelector, an alpha field the API server ignores without
		// this gate.
		"--feature-gates=ShardedListAndWatch=true",
		"--v=0",
	}
	if s := e.ControlPlane.APIServer; s != nil {
		args = append(s.args.apply(args), s.Args...)
	}
	return append(args, e.APIServerFlags...)
}

// startAPIServer starts kube-apiserver and waits for readyz. With
// choosePort it picks a free port (retrying when taken); otherwise it reuses
// the previous port.
func (e *Environment) startAPIServer(ctx context.Context, choosePort bool) error {
	httpClient, err := e.tlsClient()
	if err != nil {
		return err
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		if choosePort {
			if e.apiPort, err = process.FreePort(); err != nil {
				return err
			}
		}
		e.apiserver.Args = e.apiServerArgs(e.apiPort)
		if err := e.apiserver.Start(); err != nil {
			return err
		}
		url := "https://127.0.0.1:" + itoa(e.apiPort)
		wctx, cancelWait := process.WaitContext(ctx, e.timeouts.apiStart)
		lastErr = e.apiserver.WaitReady(wctx, process.HTTPReady(httpClient, url+"/readyz", "ok"))
		cancelWait()
		if lastErr == nil {
			e.config = &rest.Config{
				Host:            url,
				TLSClientConfig: rest.TLSClientConfig{CAData: e.ca.CertPEM, CertData: e.adminCert, KeyData: e.adminKey},
				QPS:             -1, // no client-side throttling against a test server
			}
			return nil
		}
		inUse := e.apiserver.AddressInUse()
		_ = e.apiserver.Stop(5 * time.Second)
		if !inUse {
			break
		}
		if !choosePort {
			// The old port is taken by someone else: wait for it briefly.
			select {
			case <-ctx.Done():
				return lastErr
			case <-time.After(500 * time.Millisecond):
			}
		}
	}
	return fmt.Errorf("%w\n(etcd's last output:\n%s)", lastErr, e.etcd.Output())
}

// waitDefaultNamespace waits until the API server's bootstrap has created
// the default namespace, so tests can create objects in it at once.
func (e *Environment) waitDefaultNamespace(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(e.config)
	if err != nil {
		return fmt.Errorf("envtest: clientset: %w", err)
	}
	for {
		_, err := cs.CoreV1().Namespaces().Get(ctx, metav1.NamespaceDefault, metav1.GetOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsNotFound(err) && ctx.Err() != nil {
			return fmt.Errorf("envtest: wait for namespace default: %w", err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("envtest: namespace default never appeared: %w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// tlsClient returns an HTTP client that trusts the Environment's CA and
// presents the admin certificate, for kube-apiserver's readiness check.
func (e *Environment) tlsClient() (*http.Client, error) {
	cert, err := tls.X509KeyPair(e.adminCert, e.adminKey)
	if err != nil {
		return nil, fmt.Errorf("envtest: admin key pair: %w", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(e.ca.Cert)
	return &http.Client{
		Timeout: 5 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		}},
	}, nil
}

func itoa(i int) string { return strconv.Itoa(i) }

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("envtest: write %s: %w", path, err)
	}
	return nil
}

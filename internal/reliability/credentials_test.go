package reliability_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/rest"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// syncBuffer is a bytes.Buffer safe for klog's writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// klogVerbosity is the verbosity TestCredentialsNeverLogged turns klog up
// to: 10 (request headers, curl commands, response bodies, detailed
// timing), or 8 (request and response headers, no curl command) under the
// race detector. From 9 up, client-go's debugging round tripper reads the
// timings its HTTP trace callbacks write without their lock once a
// request returns, while a dial or TLS handshake that request started
// may still be reporting (client-go v0.37.2 transport/round_trippers.go
// :558-593 against :620-627): a race in client-go, not here. `make test`
// runs this test a second time without -race, at 10.
func klogVerbosity() string {
	if raceDetector {
		return "8"
	}
	return "10"
}

// verboseKlog sends client-go's klog output, at klogVerbosity, to a buffer
// until the test ends. klog is process-global: the setting is undone in
// cleanup.
func verboseKlog(t *testing.T) *syncBuffer {
	t.Helper()
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	buf := &syncBuffer{}
	require.NoError(t, fs.Set("logtostderr", "false"))
	require.NoError(t, fs.Set("alsologtostderr", "false"))
	require.NoError(t, fs.Set("stderrthreshold", "FATAL"))
	require.NoError(t, fs.Set("v", klogVerbosity()))
	klog.SetOutput(buf)
	t.Cleanup(func() {
		klog.Flush()
		_ = fs.Set("v", "0")
		_ = fs.Set("logtostderr", "true")
		klog.SetOutput(nil)
	})
	return buf
}

// TestCredentialsNeverLogged runs managers whose credentials carry
// canaries (a bearer token, and an exec plugin's token and environment)
// with client-go's klog at verbosity 10 (8 under -race, see
// klogVerbosity) and the manager's logger at every level, through working
// requests, failing ones (401 from the API server)
// and a write the server rejects; then looks for the canaries in every log
// and in the printed rest.Config.
func TestCredentialsNeverLogged(t *testing.T) {
	klogs := verboseKlog(t)
	tokenCanary := "tok-" + string(uuid.NewUUID())
	execCanary := "exec-" + string(uuid.NewUUID())
	envCanary := "env-" + string(uuid.NewUUID())
	canaries := []string{tokenCanary, execCanary, envCanary}
	var forms []string
	for _, c := range canaries {
		forms = append(forms, c, base64.StdEncoding.EncodeToString([]byte(c)), c[len(c)-8:])
	}

	ns := newNamespace(t)
	configMaps(t, ns, 3)
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })

	withToken := p.Config()
	withToken.BearerToken = tokenCanary
	withExec := p.Config()
	withExec.ExecProvider = &clientcmdapi.ExecConfig{
		APIVersion: "client.authentication.k8s.io/v1",
		Command:    "/bin/sh",
		Args: []string{"-c", `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"` +
			execCanary + `"}}'`},
		Env:             []clientcmdapi.ExecEnvVar{{Name: "SECRET", Value: envCanary}},
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	// Straight at the API server, which does not know the token: every
	// request fails with 401 and is logged as such.
	rejected := rest.CopyConfig(restConfig)
	rejected.CertData, rejected.KeyData, rejected.CertFile, rejected.KeyFile = nil, nil, "", ""
	rejected.BearerToken = tokenCanary

	var logs []*capture
	for i, cfg := range []*rest.Config{withToken, withExec, rejected} {
		c := newCapture()
		logs = append(logs, c)
		opts := manager.Options{Logger: c.logger()}
		if i == 2 { // discovery would fail with 401 before the controller is built
			opts.MapperProvider = func(*rest.Config, *http.Client) (meta.RESTMapper, error) {
				m := meta.NewDefaultRESTMapper(nil)
				m.Add(corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace)
				return m, nil
			}
		}
		mgr := newManager(t, cfg, ns, opts)
		done := make(chan struct{})
		var once sync.Once
		require.NoError(t, builder.ControllerManagedBy(mgr).For(&corev1.ConfigMap{}).Named(unique("creds")).
			Complete(reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
				var cm corev1.ConfigMap
				if err := mgr.GetClient().Get(ctx, req.NamespacedName, &cm); err != nil {
					return reconcile.Result{}, client404(err)
				}
				once.Do(func() { close(done) })
				bad := cm.DeepCopy()
				bad.Data = map[string]string{"not a valid key!": "x"}
				return reconcile.Result{}, mgr.GetClient().Update(ctx, bad) // 422, logged
			})))
		r := start(mgr)
		if i < 2 {
			select {
			case <-done:
			case <-time.After(convergeWithin): // hang bound
				t.Fatalf("manager %d never reconciled", i)
			}
		} else {
			// A direct client call fails with 401 too.
			c, err := client.New(cfg, client.Options{})
			require.NoError(t, err)
			err = c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "cm-0"}, &corev1.ConfigMap{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "provide credentials", "a 401")
			time.Sleep(2 * time.Second) // the reflector logs its failures
		}
		_ = r.stop(t)
	}
	klog.Flush()

	printed := []string{
		fmt.Sprintf("%v", withToken), fmt.Sprintf("%+v", withToken), fmt.Sprintf("%#v", withToken), fmt.Sprint(withToken),
		fmt.Sprintf("%v", withExec), fmt.Sprintf("%+v", withExec), fmt.Sprintf("%#v", withExec),
		withToken.String(), withExec.String(),
	}
	var managerLogs strings.Builder
	lines, verbose := 0, 0
	for _, c := range logs {
		for _, l := range c.all() {
			managerLogs.WriteString(l.text + "\n")
			lines++
			if l.level > 0 {
				verbose++
			}
		}
	}
	kl := klogs.String()
	require.Contains(t, kl, "Authorization", "klog at verbosity 8 and up logs request headers (masked)")
	if !raceDetector {
		require.Contains(t, kl, "curlCommand", "klog at verbosity 10 logs curl commands")
	}
	require.Contains(t, managerLogs.String(), "Unauthorized", "the failing manager logged its failures")
	for _, f := range forms {
		assert.NotContains(t, kl, f, "canary in client-go's klog output")
		assert.NotContains(t, managerLogs.String(), f, "canary in the manager's logs")
		for _, s := range printed {
			assert.NotContains(t, s, f, "canary in a printed rest.Config")
		}
	}
	t.Logf("searched %d bytes of klog output at -v=%s and %d manager log lines (%d verbose), %d printed configs: no canary",
		len(kl), klogVerbosity(), lines, verbose, len(printed))
}

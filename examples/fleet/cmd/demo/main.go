// Command demo shows one operator reconciling across a fleet: it starts
// three local control planes (a hub, where the operator's manager lives,
// and two member clusters, eu-1 and us-1), runs the fleet example
// operator on the hub with a kubeconfig-Secret provider, registers eu-1,
// adds us-1 while it runs, removes eu-1, and exits with a summary.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/fleet"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/multicluster/providers/kubeconfig"
)

const fleetNamespace = "fleet"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "demo-fleet failed:", err)
		os.Exit(1)
	}
}

type stepper struct {
	n     int
	start time.Time
}

func (s *stepper) step(format string, args ...any) {
	s.n++
	fmt.Printf("\n[%5.1fs] %d. %s\n", time.Since(s.start).Seconds(), s.n, fmt.Sprintf(format, args...))
}

func detail(format string, args ...any) { fmt.Printf("          %s\n", fmt.Sprintf(format, args...)) }

// plane is one local control plane.
type plane struct {
	name string
	env  *envtest.Environment
	cfg  *rest.Config
	c    client.Client
}

func run(ctx context.Context) error {
	s := &stepper{start: time.Now()}
	s.step("Starting three local control planes (etcd %s, kube-apiserver %s): hub, eu-1, us-1",
		envtest.EtcdVersion, envtest.KubeAPIServerVersion)
	planes := []*plane{{name: "hub"}, {name: "eu-1"}, {name: "us-1"}}
	if err := startPlanes(planes); err != nil {
		return err
	}
	defer func() {
		fmt.Println()
		s.step("Stopping the control planes")
		stopPlanes(planes)
	}()
	hub, eu, us := planes[0], planes[1], planes[2]
	for _, p := range planes {
		detail("%-5s API server at %s", p.name, p.cfg.Host)
	}

	s.step("Creating labelled ConfigMaps in every cluster before the operator runs")
	for _, p := range planes {
		if err := createStamped(ctx, p, "settings"); err != nil {
			return err
		}
	}
	if err := hub.c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fleetNamespace}}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	detail("default/settings in hub, eu-1 and us-1 (label %s=true); namespace %q in hub for kubeconfig Secrets", fleet.StampLabel, fleetNamespace)

	s.step("Starting the fleet operator on the hub (one manager, one controller, Options.Clusters = kubeconfig Secrets in %q)", fleetNamespace)
	quiet := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	provider, err := kubeconfig.New(hub.cfg, kubeconfig.Options{Namespace: fleetNamespace, Logger: quiet})
	if err != nil {
		return err
	}
	mgr, err := manager.New(hub.cfg, manager.Options{Clusters: provider, Logger: quiet})
	if err != nil {
		return err
	}
	if err := fleet.SetupWithManager(mgr); err != nil {
		return err
	}
	mgrCtx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mgrCtx) }()
	defer func() {
		stopMgr()
		if err := <-mgrDone; err != nil {
			fmt.Fprintln(os.Stderr, "manager:", err)
		}
	}()
	took, err := waitStamped(ctx, hub, "settings", "hub")
	if err != nil {
		return err
	}
	detail("hub's default/settings stamped cluster=hub after %s", took)

	s.step("Registering eu-1: writing Secret %s/eu-1 with its kubeconfig", fleetNamespace)
	if err := register(ctx, hub, eu); err != nil {
		return err
	}
	took, err = waitStamped(ctx, eu, "settings", "eu-1")
	if err != nil {
		return err
	}
	detail("eu-1 joined; its default/settings (created before) stamped cluster=eu-1 %s after the Secret", took)
	detail("engaged clusters: %v", mgr.GetFleet().Clusters())

	s.step("Adding us-1 while the operator runs")
	if err := register(ctx, hub, us); err != nil {
		return err
	}
	engageUS, err := waitStamped(ctx, us, "settings", "us-1")
	if err != nil {
		return err
	}
	detail("us-1 joined; default/settings stamped cluster=us-1 %s after the Secret", engageUS)
	detail("engaged clusters: %v", mgr.GetFleet().Clusters())

	s.step("Creating a new ConfigMap in each member cluster")
	for _, p := range []*plane{eu, us} {
		if err := createStamped(ctx, p, "orders"); err != nil {
			return err
		}
		took, err := waitStamped(ctx, p, "orders", p.name)
		if err != nil {
			return err
		}
		detail("%s: default/orders stamped cluster=%s %s after its creation", p.name, p.name, took)
	}

	s.step("Removing eu-1: deleting Secret %s/eu-1", fleetNamespace)
	if err := hub.c.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fleetNamespace, Name: eu.name}}); err != nil {
		return err
	}
	left := time.Now()
	for slicesContain(mgr.GetFleet().Clusters(), eu.name) {
		if time.Since(left) > time.Minute {
			return errors.New("eu-1 did not leave within a minute")
		}
		time.Sleep(20 * time.Millisecond)
	}
	detail("eu-1 left after %s: its informers, watches and queued Requests are gone; engaged clusters: %v",
		time.Since(left).Round(time.Millisecond), mgr.GetFleet().Clusters())
	if err := createStamped(ctx, eu, "after-leaving"); err != nil {
		return err
	}
	if err := createStamped(ctx, us, "after-leaving"); err != nil {
		return err
	}
	if _, err := waitStamped(ctx, us, "after-leaving", "us-1"); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)
	euStamp, err := stampOf(ctx, eu, "after-leaving")
	if err != nil {
		return err
	}
	if euStamp != "" {
		return fmt.Errorf("eu-1 left, but its default/after-leaving was stamped %q", euStamp)
	}
	detail("a ConfigMap created in eu-1 after it left stays unstamped (2 s later); the same in us-1 was stamped")

	s.step("Summary")
	for _, p := range planes {
		stamped, total, err := count(ctx, p)
		if err != nil {
			return err
		}
		detail("%-5s %d of %d labelled ConfigMaps stamped", p.name, stamped, total)
	}
	detail("clusters engaged now: %v (the hub is the manager's own cluster)", mgr.GetFleet().Clusters())
	detail("us-1, added at run time: Secret written to first reconcile done in %s", engageUS)
	return nil
}

// startPlanes starts the planes in parallel.
func startPlanes(planes []*plane) error {
	errs := make([]error, len(planes))
	var wg sync.WaitGroup
	for i, p := range planes {
		wg.Go(func() {
			p.env = &envtest.Environment{}
			if p.cfg, errs[i] = p.env.Start(); errs[i] != nil {
				return
			}
			p.c, errs[i] = client.New(p.cfg, client.Options{})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		stopPlanes(planes)
		return err
	}
	return nil
}

func stopPlanes(planes []*plane) {
	var wg sync.WaitGroup
	for _, p := range planes {
		if p.env != nil {
			wg.Go(func() {
				if err := p.env.Stop(); err != nil {
					fmt.Fprintln(os.Stderr, "stop", p.name+":", err)
				}
			})
		}
	}
	wg.Wait()
}

func createStamped(ctx context.Context, p *plane, name string) error {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name,
		Labels: map[string]string{fleet.StampLabel: "true"}}, Data: map[string]string{"owner": "demo"}}
	if err := p.c.Create(ctx, cm); err != nil {
		return fmt.Errorf("create configmap default/%s in %s: %w", name, p.name, err)
	}
	return nil
}

// stampOf returns data.cluster of default/name in p (read from the API
// server, not from the operator's cache).
func stampOf(ctx context.Context, p *plane, name string) (string, error) {
	var cm corev1.ConfigMap
	if err := p.c.Get(ctx, client.ObjectKey{Namespace: "default", Name: name}, &cm); err != nil {
		return "", fmt.Errorf("get configmap default/%s in %s: %w", name, p.name, err)
	}
	return cm.Data["cluster"], nil
}

// waitStamped waits until default/name in p is stamped want, and returns
// how long that took.
func waitStamped(ctx context.Context, p *plane, name, want string) (time.Duration, error) {
	start := time.Now()
	for {
		got, err := stampOf(ctx, p, name)
		if err != nil {
			return 0, err
		}
		if got == want {
			return time.Since(start).Round(time.Millisecond), nil
		}
		if time.Since(start) > time.Minute {
			return 0, fmt.Errorf("default/%s in %s: not stamped %q within a minute (data.cluster=%q)", name, p.name, want, got)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// register writes the kubeconfig Secret of member into hub's fleet
// namespace.
func register(ctx context.Context, hub, member *plane) error {
	kc, err := kubeconfigOf(member.cfg)
	if err != nil {
		return err
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: fleetNamespace, Name: member.name,
		Labels: map[string]string{kubeconfig.DefaultLabel: "true"}}, Data: map[string][]byte{kubeconfig.DefaultDataKey: kc}}
	if err := hub.c.Create(ctx, sec); err != nil {
		return fmt.Errorf("create secret %s/%s: %w", fleetNamespace, member.name, err)
	}
	return nil
}

// kubeconfigOf renders cfg as a kubeconfig with every credential inline
// (the provider refuses local files by default).
func kubeconfigOf(cfg *rest.Config) ([]byte, error) {
	ca := cfg.CAData
	if len(ca) == 0 && cfg.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: ca, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["c"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "c"}
	kc.CurrentContext = "c"
	return clientcmd.Write(*kc)
}

// count returns how many labelled ConfigMaps of p are stamped, of all.
func count(ctx context.Context, p *plane) (stamped, total int, err error) {
	var list corev1.ConfigMapList
	if err := p.c.List(ctx, &list, client.MatchingLabels{fleet.StampLabel: "true"}); err != nil {
		return 0, 0, fmt.Errorf("list configmaps in %s: %w", p.name, err)
	}
	for _, cm := range list.Items {
		if cm.Data["stampedBy"] == fleet.StampedBy {
			stamped++
		}
	}
	return stamped, len(list.Items), nil
}

func slicesContain(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// Command demo shows the App operator at work, step by step: it starts a
// local control plane (or uses --kubeconfig), runs the operator, creates an
// App, shows the Deployment and Service it gets and the status it reports,
// changes the spec, deletes a child, deletes the App, and stops.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/app"
	appv1 "github.com/kubeloop/kubeloop/examples/app/api/v1"
	"github.com/kubeloop/kubeloop/manager"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "run against the cluster of this kubeconfig instead of a local control plane")
	namespace := flag.String("namespace", "kubeloop-demo", "namespace to create the demo App in")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *namespace); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

// step prints one numbered step of the demo.
type stepper struct {
	n     int
	start time.Time
}

func (s *stepper) step(format string, args ...any) {
	s.n++
	fmt.Printf("\n[%5.1fs] %d. %s\n", time.Since(s.start).Seconds(), s.n, fmt.Sprintf(format, args...))
}

func detail(format string, args ...any) { fmt.Printf("          %s\n", fmt.Sprintf(format, args...)) }

func run(ctx context.Context, kubeconfig, namespace string) error {
	s := &stepper{start: time.Now()}
	crds, err := envtest.ReadCRDs(crdPath())
	if err != nil {
		return err
	}

	var cfg *rest.Config
	local := kubeconfig == ""
	if local {
		s.step("Starting a local control plane: etcd %s and kube-apiserver %s on loopback", envtest.EtcdVersion, envtest.KubeAPIServerVersion)
		env := &envtest.Environment{CRDs: crds}
		if cfg, err = env.Start(); err != nil {
			return err
		}
		defer func() {
			fmt.Println()
			s.step("Stopping the local control plane")
			if err := env.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, "stop:", err)
			}
		}()
		detail("API server at %s; the App CRD is installed", cfg.Host)
	} else {
		s.step("Using the cluster of %s", kubeconfig)
		if cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig); err != nil {
			return fmt.Errorf("load kubeconfig: %w", err)
		}
		if err := envtest.ApplyCRDs(ctx, cfg, crds...); err != nil {
			return err
		}
		detail("the App CRD is installed")
	}

	scheme := kruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return err
	}
	if err := appv1.AddToScheme(scheme); err != nil {
		return err
	}

	s.step("Starting the App operator (a kubeloop manager with one controller)")
	quiet := logr.FromSlogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	mgr, err := manager.New(cfg, manager.Options{Scheme: scheme, Logger: quiet})
	if err != nil {
		return err
	}
	if err := app.SetupWithManager(mgr); err != nil {
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

	// The demo's own reads go straight to the API server, so what it shows
	// is what the server holds, not what the operator's cache holds.
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if err := c.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}

	s.step("Creating App %s/web: image nginx:1.27, 2 replicas, port 80", namespace)
	two := int32(2)
	web := &appv1.App{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "web"},
		Spec: appv1.AppSpec{Image: "nginx:1.27", Replicas: &two, Port: 80}}
	if err := c.Create(ctx, web); err != nil {
		return err
	}
	key := client.ObjectKeyFromObject(web)

	var deploy appsv1.Deployment
	if err := waitFor(ctx, "the Deployment", func() (bool, error) {
		err := c.Get(ctx, key, &deploy)
		return err == nil, client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	showDeployment(&deploy)
	var svc corev1.Service
	if err := c.Get(ctx, key, &svc); err != nil {
		return err
	}
	detail("Service %s: port %d -> %s, cluster IP %s", svc.Name, svc.Spec.Ports[0].Port, svc.Spec.Ports[0].TargetPort.String(), svc.Spec.ClusterIP)
	if err := showStatus(ctx, c, key, "Available", metav1.ConditionFalse); err != nil {
		return err
	}

	if local {
		s.step("Playing the kubelet: this control plane has no nodes, so the demo marks the pods ready")
		if err := markReady(ctx, c, key, 2); err != nil {
			return err
		}
		if err := showStatus(ctx, c, key, "Available", metav1.ConditionTrue); err != nil {
			return err
		}
	}

	s.step("Changing the spec: image nginx:1.28, 3 replicas")
	if err := retryUpdate(ctx, c, key, func(a *appv1.App) { three := int32(3); a.Spec.Image, a.Spec.Replicas = "nginx:1.28", &three }); err != nil {
		return err
	}
	if err := waitFor(ctx, "the rolled Deployment", func() (bool, error) {
		if err := c.Get(ctx, key, &deploy); err != nil {
			return false, err
		}
		return deploy.Spec.Template.Spec.Containers[0].Image == "nginx:1.28" && *deploy.Spec.Replicas == 3, nil
	}); err != nil {
		return err
	}
	showDeployment(&deploy)
	if err := showStatus(ctx, c, key, "Available", metav1.ConditionFalse); err != nil {
		return err
	}

	s.step("Deleting the Service behind the operator's back")
	oldUID := svc.UID
	if err := c.Delete(ctx, &svc); err != nil {
		return err
	}
	if err := waitFor(ctx, "the Service to come back", func() (bool, error) {
		err := c.Get(ctx, key, &svc)
		return err == nil && svc.UID != oldUID, client.IgnoreNotFound(err)
	}); err != nil {
		return err
	}
	detail("Service %s is back (uid %s, was %s)", svc.Name, short(svc.UID), short(oldUID))

	s.step("Deleting App %s: the finalizer deletes the Deployment and the Service first", key)
	if err := c.Delete(ctx, web); err != nil {
		return err
	}
	if err := waitFor(ctx, "the App and its children to be gone", func() (bool, error) {
		gone := 0
		for _, obj := range []client.Object{&appv1.App{}, &appsv1.Deployment{}, &corev1.Service{}} {
			if err := c.Get(ctx, key, obj); apierrors.IsNotFound(err) {
				gone++
			} else if err != nil {
				return false, err
			}
		}
		return gone == 3, nil
	}); err != nil {
		return err
	}
	detail("App, Deployment and Service are gone")

	s.step("Stopping the operator")
	stopMgr()
	if err := <-mgrDone; err != nil {
		return fmt.Errorf("manager: %w", err)
	}
	mgrDone <- nil
	detail("the manager stopped cleanly")
	return nil
}

func crdPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "config", "app-crd.yaml")
}

func waitFor(ctx context.Context, what string, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for {
		ok, err := cond()
		if err != nil {
			return fmt.Errorf("wait for %s: %w", what, err)
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func showDeployment(d *appsv1.Deployment) {
	owner := "none"
	if ref := metav1.GetControllerOf(d); ref != nil {
		owner = ref.Kind + "/" + ref.Name
	}
	detail("Deployment %s: image %s, %d replicas, controlled by %s", d.Name, d.Spec.Template.Spec.Containers[0].Image, *d.Spec.Replicas, owner)
}

// showStatus waits until the App's status reflects its current generation
// with condition cond at want, then prints it.
func showStatus(ctx context.Context, c client.Client, key client.ObjectKey, cond string, want metav1.ConditionStatus) error {
	var a appv1.App
	err := waitFor(ctx, "the App's status", func() (bool, error) {
		if err := c.Get(ctx, key, &a); err != nil {
			return false, err
		}
		got := apimeta.FindStatusCondition(a.Status.Conditions, cond)
		return a.Status.ObservedGeneration == a.Generation && got != nil && got.Status == want, nil
	})
	if err != nil {
		return err
	}
	var conds []string
	for _, c := range a.Status.Conditions {
		conds = append(conds, fmt.Sprintf("%s=%s (%s)", c.Type, c.Status, c.Message))
	}
	detail("App status: observedGeneration %d, readyReplicas %d, %s", a.Status.ObservedGeneration, a.Status.ReadyReplicas, strings.Join(conds, ", "))
	return nil
}

// markReady writes the Deployment status a kubelet and the Deployment
// controller would produce once the pods run.
func markReady(ctx context.Context, c client.Client, key client.ObjectKey, n int32) error {
	var d appsv1.Deployment
	if err := c.Get(ctx, key, &d); err != nil {
		return err
	}
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n}
	return c.Status().Update(ctx, &d)
}

func retryUpdate(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(*appv1.App)) error {
	for {
		var a appv1.App
		if err := c.Get(ctx, key, &a); err != nil {
			return err
		}
		mutate(&a)
		err := c.Update(ctx, &a)
		if !apierrors.IsConflict(err) {
			return err
		}
		if ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
	}
}

func short[T ~string](s T) string {
	if len(s) > 8 {
		return string(s[:8])
	}
	return string(s)
}

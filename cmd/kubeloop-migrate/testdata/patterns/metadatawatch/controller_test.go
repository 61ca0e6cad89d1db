package metadatawatch

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

func TestAddLeaderElectionTo(t *testing.T) {
	keep := 40 * time.Second
	o := manager.Options{LeaseDuration: &keep}
	AddLeaderElectionTo(&o, LeaderElection{
		LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
		RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
		RetryPeriod:   &metav1.Duration{Duration: 2 * time.Second},
	})
	lease, renew, retry := 40*time.Second, 10*time.Second, 2*time.Second
	want := manager.Options{LeaseDuration: &lease, RenewDeadline: &renew, RetryPeriod: &retry}
	if o.LeaseDuration == nil || o.RenewDeadline == nil || o.RetryPeriod == nil {
		t.Fatalf("every duration is set: %+v", o)
	}
	if *o.LeaseDuration != *want.LeaseDuration || *o.RenewDeadline != *want.RenewDeadline || *o.RetryPeriod != *want.RetryPeriod {
		t.Errorf("durations: got %v %v %v, want %v %v %v (a set one kept)",
			*o.LeaseDuration, *o.RenewDeadline, *o.RetryPeriod, lease, renew, retry)
	}

	var empty manager.Options
	AddLeaderElectionTo(&empty, LeaderElection{})
	if empty.LeaseDuration != nil || empty.RetryPeriod != nil {
		t.Errorf("an empty configuration sets nothing: %+v", empty)
	}
}

func TestSecretsWatchedByMetadata(t *testing.T) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := &Seen{}
	if err := (&Reconciler{Seen: seen}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()

	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls-only", Namespace: "default"}}
	if err := c.Create(ctx, secret); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !(seen.Request("tls-only") && seen.Partial("tls-only")) {
		if time.Now().After(deadline) {
			t.Fatalf("the Secret's metadata should enqueue the ConfigMap of its name: reconciled=%v metadata-only=%v",
				seen.Request("tls-only"), seen.Partial("tls-only"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

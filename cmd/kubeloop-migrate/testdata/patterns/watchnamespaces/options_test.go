package watchnamespaces

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestCacheSeesOnlyTheWatchedNamespaces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	direct, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "settings"}}); err != nil {
			t.Fatal(err)
		}
	}

	mgr, err := ctrl.NewManager(cfg, Options("team-a"))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	}()
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}

	var watched corev1.ConfigMapList
	if err := mgr.GetCache().List(ctx, &watched, client.InNamespace("team-a")); err != nil {
		t.Fatalf("list the watched namespace: %v", err)
	}
	if len(watched.Items) != 1 {
		t.Fatalf("listed %d config maps in team-a, want 1", len(watched.Items))
	}
	var other corev1.ConfigMapList
	if err := mgr.GetCache().List(ctx, &other, client.InNamespace("team-b")); err == nil {
		t.Fatalf("the cache listed team-b, which it does not watch (%d items)", len(other.Items))
	}
}

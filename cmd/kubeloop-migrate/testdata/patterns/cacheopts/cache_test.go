package cacheopts

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestCacheNamespaces(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	direct, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b", "team-c"} {
		if err := direct.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := direct.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
		if err := direct.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "secret", Namespace: ns}}); err != nil {
			t.Fatal(err)
		}
	}

	mgr, err := NewManager(cfg)
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
	syncCtx, syncCancel := context.WithTimeout(ctx, 30*time.Second)
	defer syncCancel()
	if !mgr.GetCache().WaitForCacheSync(syncCtx) {
		t.Fatal("the cache did not sync")
	}

	c := mgr.GetClient()
	get := func(obj client.Object, ns, name string) error {
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		errA := get(&corev1.ConfigMap{}, "team-a", "cm")
		errB := get(&corev1.Secret{}, "team-b", "secret")
		if errA == nil && errB == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cached reads: configmap team-a: %v; secret team-b: %v", errA, errB)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := get(&corev1.ConfigMap{}, "team-c", "cm"); err == nil {
		t.Error("a ConfigMap in team-c was read from a cache that holds team-a only")
	}
	if err := get(&corev1.Secret{}, "team-a", "secret"); err == nil {
		t.Error("a Secret in team-a was read from a cache that holds Secrets of team-b only")
	}
	list := &corev1.ConfigMapList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	for _, cm := range list.Items {
		if cm.Namespace != "team-a" {
			t.Errorf("listed ConfigMap %s/%s outside team-a", cm.Namespace, cm.Name)
		}
	}
}

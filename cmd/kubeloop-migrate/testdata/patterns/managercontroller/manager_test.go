package managercontroller

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func TestTwoControllersOfTheSameName(t *testing.T) {
	mgr, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := &Seen{}
	for _, who := range []string{"first", "second"} {
		if err := (&ConfigMapReconciler{Who: who, Seen: seen}).SetupWithManager(mgr); err != nil {
			t.Fatalf("set up the %s controller named configmaps (SkipNameValidation is on): %v", who, err)
		}
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
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "same-name", Namespace: "default"}}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !(seen.Has("first", "same-name") && seen.Has("second", "same-name")) {
		if time.Now().After(deadline) {
			t.Fatalf("both controllers should reconcile the ConfigMap: first=%v second=%v",
				seen.Has("first", "same-name"), seen.Has("second", "same-name"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

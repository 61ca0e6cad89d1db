package customwebhook

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestDefaulterLabelsThePod(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}
	if err := (&PodCustomDefaulter{Team: "platform"}).Default(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	if pod.Labels["team"] != "platform" {
		t.Fatalf("labels %v", pod.Labels)
	}
	if err := (&PodCustomDefaulter{}).Default(context.Background(), &corev1.ConfigMap{}); err == nil {
		t.Fatal("the defaulter accepted a ConfigMap")
	}
}

func TestValidator(t *testing.T) {
	v := &PodCustomValidator{}
	ctx := context.Background()
	if _, err := v.ValidateCreate(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}); err == nil {
		t.Fatal("a pod without a team label was accepted")
	}
	ok := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"team": "a"}}}
	if _, err := v.ValidateUpdate(ctx, ok, ok); err != nil {
		t.Fatal(err)
	}
	w, err := v.ValidateDelete(ctx, ok)
	if err != nil || len(w) != 1 {
		t.Fatalf("ValidateDelete = %v, %v", w, err)
	}
}

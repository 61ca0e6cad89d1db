package stagingdeps

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

const service = `apiVersion: v1
kind: Service
metadata:
  name: connect
  namespace: default
spec:
  ports:
  - port: 8080
`

func TestApplyDecodesWithKubectlsScheme(t *testing.T) {
	c := fake.NewClientBuilder().Build()
	ctx := context.Background()
	obj, err := Apply(ctx, c, []byte(service))
	if err != nil {
		t.Fatal(err)
	}
	got := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), got); err != nil {
		t.Fatal(err)
	}
	if len(got.Spec.Ports) != 1 || got.Spec.Ports[0].Port != 8080 {
		t.Fatalf("ports %+v", got.Spec.Ports)
	}
}

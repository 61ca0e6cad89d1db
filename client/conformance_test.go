package client_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// The conformance table runs every case against the real client talking to
// the package's control plane and against the fake client, so the fake is
// held to what the API server does.

var (
	widgetGVK        = schema.GroupVersionKind{Group: "test.kubeloop.dev", Version: "v1", Kind: "Widget"}
	clusterWidgetGVK = schema.GroupVersionKind{Group: "test.kubeloop.dev", Version: "v1", Kind: "ClusterWidget"}
)

type backend struct {
	name string
	new  func(t *testing.T) client.Client
}

func backends() []backend {
	return []backend{
		{name: "real", new: func(t *testing.T) client.Client {
			c, err := client.New(restConfig, client.Options{})
			require.NoError(t, err)
			return c
		}},
		{name: "fake", new: func(t *testing.T) client.Client {
			crds := meta.NewDefaultRESTMapper(nil)
			crds.Add(widgetGVK, meta.RESTScopeNamespace)
			crds.Add(clusterWidgetGVK, meta.RESTScopeRoot)
			return fake.NewClientBuilder().
				WithRESTMapper(crds).
				WithStatusSubresource(&appsv1.Deployment{}, &corev1.Pod{}, &corev1.Namespace{}, newWidget("", "")).
				Build()
		}},
	}
}

// conformanceCase is one behaviour both clients must show. ns is a fresh
// namespace that exists.
type conformanceCase struct {
	name string
	run  func(t *testing.T, ctx context.Context, c client.Client, ns string)
}

func TestConformance(t *testing.T) {
	var cases []conformanceCase
	cases = append(cases, crudCases()...)
	cases = append(cases, statusCases()...)
	cases = append(cases, patchCases()...)
	cases = append(cases, applyCases()...)
	cases = append(cases, badInputCases()...)
	cases = append(cases, scopeCases()...)
	cases = append(cases, optionStructCases()...)
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			c := b.new(t)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					ctx := t.Context()
					ns := newNamespace(t, ctx, c)
					tc.run(t, ctx, c, ns)
				})
			}
		})
	}
}

func newNamespace(t *testing.T, ctx context.Context, c client.Client) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "t-"}}
	require.NoError(t, c.Create(ctx, ns))
	return ns.Name
}

func randName(prefix string) string { return fmt.Sprintf("%s-%06d", prefix, rand.IntN(1_000_000)) }

func newConfigMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func newWidget(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

func newDeployment(ns, name string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	replicas := int32(1)
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{
					{Name: "main", Image: "example.com/main:1"},
					{Name: "side", Image: "example.com/side:1"},
				}},
			},
		},
	}
}

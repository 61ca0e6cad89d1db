package multicluster_bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kubeloop/kubeloop/bench/fakeapiserver"
	"github.com/kubeloop/kubeloop/envtest"
)

// BenchmarkRealEngage: see the package doc. It needs -real (and the
// binaries make tools builds).
func BenchmarkRealEngage(b *testing.B) {
	if !*realPlanes {
		b.Skip("needs -real: a real control plane (make tools)")
	}
	for _, n := range []int{10, 50} {
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			for range b.N {
				env := &envtest.Environment{}
				cfg, err := env.Start()
				require.NoError(b, err)
				cs, err := kubernetes.NewForConfig(cfg)
				require.NoError(b, err)
				ctx := context.Background()
				ns := fakeapiserver.FleetNamespace
				_, err = cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
				require.NoError(b, err)
				secrets := cs.CoreV1().Secrets(ns)
				create := func(name string) error {
					_, err := secrets.Create(ctx, &corev1.Secret{
						ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{fakeapiserver.KubeconfigLabel: "true"}},
						Data:       map[string][]byte{"kubeconfig": env.KubeConfig},
					}, metav1.CreateOptions{})
					return err
				}
				remove := func(name string) error { return secrets.Delete(ctx, name, metav1.DeleteOptions{}) }
				engageIdle(b, n, create, remove, startRig(b, cfg, ns))
				require.NoError(b, env.Stop())
			}
		})
	}
}

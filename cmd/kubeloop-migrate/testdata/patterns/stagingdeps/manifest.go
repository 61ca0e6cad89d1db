// Package stagingdeps decodes manifests with kubectl's scheme: a module
// that requires a Kubernetes staging module (k8s.io/kubectl here, also
// k8s.io/apiextensions-apiserver, k8s.io/component-base, ...) at the
// version of its k8s.io/api. After the port k8s.io/api is kubeloop's, so
// the staging module must move with it (kubectl v0.35's scheme imports
// k8s.io/api/scheduling/v1alpha1, which later k8s.io/api versions drop).
package stagingdeps

import (
	"context"
	"fmt"

	kubectlscheme "k8s.io/kubectl/pkg/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Apply decodes the YAML manifest and creates its object with c.
func Apply(ctx context.Context, c client.Client, manifest []byte) (client.Object, error) {
	obj, _, err := kubectlscheme.Codecs.UniversalDeserializer().Decode(manifest, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode manifest: %w", err)
	}
	o, ok := obj.(client.Object)
	if !ok {
		return nil, fmt.Errorf("manifest holds a %T, not an object with metadata", obj)
	}
	return o, c.Create(ctx, o)
}

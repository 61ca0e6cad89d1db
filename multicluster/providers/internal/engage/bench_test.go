package engage_test

import (
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// BenchmarkSyncUnchanged is a provider's resync of 1,000 engaged clusters
// of which none changed (one Secret event in a big fleet): the hashing of
// each 5 KiB kubeconfig and the comparison.
func BenchmarkSyncUnchanged(b *testing.B) {
	rec := providertest.NewRecorder()
	set := engage.NewSet(rec, logr.Discard())
	defer set.Close()
	kubeconfig := make([]byte, 5<<10)
	targets := func() []engage.Target {
		ts := make([]engage.Target, 1000)
		for i := range ts {
			name := fmt.Sprintf("cluster-%04d", i)
			ts[i] = engage.Target{Name: name, Source: "Secret fleet/" + name, Key: engage.Hash(kubeconfig),
				Config: func() (*rest.Config, error) { return &rest.Config{Host: "https://" + name}, nil }}
		}
		return ts
	}
	set.Sync(b.Context(), targets())
	b.ReportAllocs()
	for b.Loop() {
		set.Sync(b.Context(), targets())
	}
}

package client_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/fake"
)

// scopedOutCache is a cache that holds nothing and says so: every object
// is outside its scope (Holds false) and it has applied every change up
// to a version past any write.
type scopedOutCache struct{ absentCache }

func (scopedOutCache) ObservedVersion(client.Object, string) (uint64, bool) { return 1 << 40, true }
func (scopedOutCache) WaitForVersion(context.Context, client.Object, string, uint64) bool {
	return true
}
func (scopedOutCache) Holds(client.Object) bool { return false }

var _ client.CacheProgress = scopedOutCache{}

// TestCacheProgressIsExplicit: the cached client knows a cache's progress
// through CacheOptions.Progress, which defaults to the Reader when the
// Reader implements CacheProgress (CacheOptions{Reader: mgr.GetCache()},
// as controller-runtime users write it). With progress, a Get of an object
// written outside the cache's scope answers the cache's NotFound at once;
// with a Reader that says nothing of its progress, the Get compares
// resourceVersions only: it waits for the timeout, then reads the object
// from the API server.
func TestCacheProgressIsExplicit(t *testing.T) {
	tests := []struct {
		name     string
		opts     client.CacheOptions
		wantWait time.Duration
		wantRead bool // the object, from the API server
	}{
		{name: "progress given", opts: client.CacheOptions{Reader: absentCache{}, Progress: scopedOutCache{}}},
		{name: "reader with progress", opts: client.CacheOptions{Reader: scopedOutCache{}}},
		{name: "reader alone", opts: client.CacheOptions{Reader: absentCache{}}, wantWait: 2 * time.Second, wantRead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				server := fake.NewClientBuilder().Build()
				c, err := client.NewCachedForTest(server, tt.opts)
				require.NoError(t, err)
				require.NoError(t, c.Create(ctx, newConfigMap("ns", "cm", map[string]string{"v": "1"})))

				start := time.Now()
				var got corev1.ConfigMap
				err = c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "cm"}, &got)
				assert.Equal(t, tt.wantWait, time.Since(start), "time waited for the cache")
				if tt.wantRead {
					require.NoError(t, err)
					assert.Equal(t, "1", got.Data["v"])
					return
				}
				assert.True(t, apierrors.IsNotFound(err), "out of the cache's scope: %v", err)
			})
		})
	}
}

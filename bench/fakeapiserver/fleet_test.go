package fakeapiserver

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestFleet checks, in both encodings, that client-go reads the hub's
// Secrets (LIST, then a WATCH from the list's version that sees a Secret
// created and deleted), that a Secret's kubeconfig reaches its member
// under /clusters/<name>, that a fired event reaches only its member, and
// that a blackholed member answers nothing.
func TestFleet(t *testing.T) {
	f, err := NewFleet(FleetConfig{ConfigMaps: 2})
	require.NoError(t, err)
	hs := httptest.NewServer(f)
	defer hs.Close()
	f.SetURL(hs.URL)
	p := &FleetProcess{Connect(hs.URL)}
	require.NoError(t, p.CreateSecret("east"))
	for _, ct := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			ctx := context.Background()
			cc := rest.ContentConfig{ContentType: ct, AcceptContentTypes: ct}
			hub, err := kubernetes.NewForConfig(&rest.Config{Host: hs.URL, ContentConfig: cc})
			require.NoError(t, err)
			l, err := hub.CoreV1().Secrets(FleetNamespace).List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, l.Items, 1)
			assert.Equal(t, "true", l.Items[0].Labels[KubeconfigLabel])
			w, err := hub.CoreV1().Secrets(FleetNamespace).Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
			require.NoError(t, err)
			defer w.Stop()
			require.NoError(t, p.CreateSecret("west-"+ct[len(ct)-4:]))
			ev := <-w.ResultChan()
			require.Equal(t, watch.Added, ev.Type)
			require.NoError(t, p.DeleteSecret("west-"+ct[len(ct)-4:]))
			ev = <-w.ResultChan()
			require.Equal(t, watch.Deleted, ev.Type)

			cfg, err := clientcmd.RESTConfigFromKubeConfig(l.Items[0].Data["kubeconfig"])
			require.NoError(t, err)
			cfg.ContentConfig = cc
			east, err := kubernetes.NewForConfig(cfg)
			require.NoError(t, err)
			cms, err := east.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, cms.Items, 2)
			yes := true
			cw, err := east.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true})
			require.NoError(t, err)
			defer cw.Stop()
			for range 2 {
				require.Equal(t, watch.Added, (<-cw.ResultChan()).Type)
			}
			require.Equal(t, watch.Bookmark, (<-cw.ResultChan()).Type)
			require.NoError(t, p.Fire(7, "other"))
			require.NoError(t, p.Fire(8, "east"))
			ev = <-cw.ResultChan()
			require.Equal(t, watch.Modified, ev.Type)
			assert.Equal(t, "8", ev.Object.(*corev1.ConfigMap).Data["seq"], "only east's event reaches east")
		})
	}
	require.NoError(t, p.Blackhole("east"))
	east, err := kubernetes.NewForConfig(p.Member("east"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = east.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	require.ErrorIs(t, err, context.DeadlineExceeded, "a blackholed member answers nothing")
	held := make(chan error, 1)
	go func() {
		_, err := east.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
		held <- err
	}()
	require.Eventually(t, func() bool {
		st, err := p.FleetStats()
		return err == nil && st.Held == 1
	}, 10*time.Second, 5*time.Millisecond, "the blackhole holds the request")
	require.NoError(t, p.Restore("east"))
	require.Error(t, <-held, "a request held by the blackhole gets a 503 when it ends")
	_, err = east.CoreV1().ConfigMaps("").List(context.Background(), metav1.ListOptions{})
	require.NoError(t, err, "a restored member answers")
	st, err := p.FleetStats()
	require.NoError(t, err)
	assert.Equal(t, 1, st.Secrets)
}

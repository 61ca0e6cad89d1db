package fakeapiserver

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// TestServeListAndWatch checks that client-go decodes what the server
// serves, in both encodings: the LIST, a WatchList stream ending in the
// initial-events-end bookmark, and fired MODIFIED events.
func TestServeListAndWatch(t *testing.T) {
	srv, err := New(Config{ConfigMaps: 20, Pods: 3, Secrets: 2})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	for _, ct := range []string{runtime.ContentTypeJSON, runtime.ContentTypeProtobuf} {
		t.Run(ct, func(t *testing.T) {
			cs, err := kubernetes.NewForConfig(&rest.Config{Host: hs.URL, ContentConfig: rest.ContentConfig{ContentType: ct, AcceptContentTypes: ct}})
			require.NoError(t, err)
			ctx := context.Background()
			l, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			require.Len(t, l.Items, 20)
			assert.Equal(t, ConfigMap(7).Data, l.Items[7].Data)
			assert.Equal(t, "21", l.ResourceVersion)
			pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			require.NoError(t, err)
			assert.Equal(t, Pod(2).Spec.Containers[0].Image, pods.Items[2].Spec.Containers[0].Image)

			yes := true
			wl, err := cs.CoreV1().Secrets("").Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true})
			require.NoError(t, err)
			for i := range 2 {
				ev := <-wl.ResultChan()
				require.Equal(t, watch.Added, ev.Type)
				assert.Equal(t, Secret(i).Name, ev.Object.(*corev1.Secret).Name)
			}
			ev := <-wl.ResultChan()
			require.Equal(t, watch.Bookmark, ev.Type)
			assert.Equal(t, "true", ev.Object.(*corev1.Secret).Annotations[metav1.InitialEventsAnnotationKey])
			wl.Stop()

			w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{ResourceVersion: l.ResourceVersion})
			require.NoError(t, err)
			defer w.Stop()
			p := Connect(hs.URL)
			prep, err := p.Prepare(6, 4)
			require.NoError(t, err)
			before := MonotonicNow()
			n, err := p.Fire(6)
			require.NoError(t, err)
			assert.Equal(t, 1, n)
			for k := range 6 {
				ev := <-w.ResultChan()
				require.Equal(t, watch.Modified, ev.Type)
				cm := ev.Object.(*corev1.ConfigMap)
				assert.Equal(t, ConfigMap(k%4).Name, cm.Name)
				assert.Equal(t, strconv.FormatInt(prep.BaseRV+int64(k)+1, 10), cm.ResourceVersion)
			}
			st, err := p.Stats()
			require.NoError(t, err)
			assert.GreaterOrEqual(t, st.LastWatchFlush, before, "the send is timed after the trigger")
			assert.LessOrEqual(t, st.LastWatchFlush, MonotonicNow(), "and before the events were received")
		})
	}
}

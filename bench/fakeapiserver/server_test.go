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

// TestLanes checks that events prepared and fired in a lane reach only the
// watches whose User-Agent names it, each lane with its own cursor and
// send time, while the lane "" still reaches every watch.
func TestLanes(t *testing.T) {
	srv, err := New(Config{ConfigMaps: 10})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	defer hs.Close()
	p := Connect(hs.URL)
	ctx := context.Background()
	watchIn := func(lane string) watch.Interface {
		cs, err := kubernetes.NewForConfig(p.InLane(lane).Config())
		require.NoError(t, err)
		w, err := cs.CoreV1().ConfigMaps("").Watch(ctx, metav1.ListOptions{ResourceVersion: "11"})
		require.NoError(t, err)
		return w
	}
	a, b := watchIn("lane-a"), watchIn("lane-b")
	defer a.Stop()
	defer b.Stop()
	la, lb := p.InLane("lane-a"), p.InLane("lane-b")
	prepA, err := la.Prepare(2, 2)
	require.NoError(t, err)
	prepB, err := lb.Prepare(1, 1)
	require.NoError(t, err)

	n, err := la.Fire(2)
	require.NoError(t, err)
	assert.Equal(t, 1, n, "lane-a has one watch")
	for k := range 2 {
		ev := <-a.ResultChan()
		assert.Equal(t, strconv.FormatInt(prepA.BaseRV+int64(k)+1, 10), ev.Object.(*corev1.ConfigMap).ResourceVersion)
	}
	_, err = la.Fire(1)
	assert.Error(t, err, "lane-a's 2 prepared events are spent; lane-b's cursor is its own")
	stA, err := la.Stats()
	require.NoError(t, err)
	stB, err := lb.Stats()
	require.NoError(t, err)
	assert.NotZero(t, stA.LastWatchFlush)
	assert.Zero(t, stB.LastWatchFlush, "nothing was sent in lane-b")

	_, err = lb.Fire(1)
	require.NoError(t, err)
	ev := <-b.ResultChan()
	assert.Equal(t, strconv.FormatInt(prepB.BaseRV+1, 10), ev.Object.(*corev1.ConfigMap).ResourceVersion,
		"lane-b's watch got its own event, not lane-a's before it")
	select {
	case ev := <-a.ResultChan():
		t.Fatalf("lane-a's watch got lane-b's event %v", ev)
	default:
	}

	_, err = p.Prepare(1, 1)
	require.NoError(t, err)
	n, err = p.Fire(1)
	require.NoError(t, err)
	assert.Equal(t, 2, n, "no lane: every watch")
	<-a.ResultChan()
	<-b.ResultChan()

	_, err = p.InLane("nobody").Prepare(1, 1)
	require.NoError(t, err)
	_, err = p.InLane("nobody").Fire(1)
	assert.ErrorContains(t, err, `nobody in lane "nobody"`)
}

package listwatch

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// source is a ShardSource whose selector the test sets.
type source struct {
	mu      sync.Mutex
	sel     string
	gen     uint64
	changed chan struct{}
	listing []uint64
	listed  []uint64
}

func newSource(sel string) *source { return &source{sel: sel, gen: 1, changed: make(chan struct{})} }

func (s *source) Shard() (string, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sel, s.gen, s.changed
}
func (s *source) Listing(_ any, gen uint64) {
	s.mu.Lock()
	s.listing = append(s.listing, gen)
	s.mu.Unlock()
}
func (s *source) Listed(_ any, gen uint64) {
	s.mu.Lock()
	s.listed = append(s.listed, gen)
	s.mu.Unlock()
}
func (s *source) set(sel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sel, s.gen = sel, s.gen+1
	close(s.changed)
	s.changed = make(chan struct{})
}

func TestShardFilter(t *testing.T) {
	src := newSource("A")
	var got []metav1.ListOptions
	list := func(_ context.Context, o metav1.ListOptions) (*metav1.List, error) {
		got = append(got, o)
		return &metav1.List{}, nil
	}
	var watchCtx context.Context
	fw := watch.NewFake()
	watchFn := func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
		got = append(got, o)
		watchCtx = ctx
		return fw, nil
	}
	l, w := shardFilter(Request{Shard: src}, list, watchFn)
	ctx := context.Background()

	_, err := l(ctx, metav1.ListOptions{ResourceVersion: "0", Limit: 500})
	require.NoError(t, err)
	_, err = l(ctx, metav1.ListOptions{Limit: 1}) // the reflector's probe
	require.NoError(t, err)
	src.set("B")
	_, err = l(ctx, metav1.ListOptions{Continue: "x"}) // a later page keeps the first one's selector
	require.NoError(t, err)
	assert.Equal(t, []string{"A", "A", "A"}, []string{got[0].ShardSelector, got[1].ShardSelector, got[2].ShardSelector})
	assert.Equal(t, []uint64{1}, src.listing, "only the first page of a real list is recorded")

	// The selector changed since the list: the watch asks for a relist.
	stale, err := w(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	ev := <-stale.ResultChan()
	require.Equal(t, watch.Error, ev.Type)
	assert.True(t, apierrors.IsGone(apierrors.FromObject(ev.Object)) || apierrors.IsResourceExpired(apierrors.FromObject(ev.Object)))
	assert.Equal(t, []uint64{1}, src.listed, "the list of generation 1 was stored")

	// List again (generation 2), then watch: the watch carries B and ends
	// when the selector changes.
	_, err = l(ctx, metav1.ListOptions{ResourceVersion: "7", Limit: 500})
	require.NoError(t, err)
	wi, err := w(ctx, metav1.ListOptions{ResourceVersion: "7"})
	require.NoError(t, err)
	assert.Equal(t, "B", got[len(got)-1].ShardSelector)
	assert.Equal(t, []uint64{1, 2}, src.listed)
	require.NoError(t, watchCtx.Err())
	src.set("C")
	<-watchCtx.Done()
	wi.Stop()

	// Without a source nothing changes.
	l2, _ := shardFilter(Request{}, list, watchFn)
	_, err = l2(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	assert.Empty(t, got[len(got)-1].ShardSelector)
}

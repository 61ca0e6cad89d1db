package source_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/kubeloop/kubeloop/controller/source"
	"github.com/kubeloop/kubeloop/handler"
)

// A Kind source started again after its previous ctx ended (a controller
// restarted for a new leader term) hands the informer's objects as initial
// adds from its store: the informer does not list again.
func TestKindStartAgainFromTheStore(t *testing.T) {
	inf := newInformers()
	inf.src.Add(cm("a"))
	inf.run(t)
	rec := newRecorder()
	src := source.Kind(inf, &corev1.ConfigMap{}, rec)
	require.NoError(t, src.Prepare(t.Context()))

	first, stopFirst := context.WithCancel(t.Context())
	require.NoError(t, src.Start(first, newQueue(t)))
	require.NoError(t, src.WaitForSync(first))
	assert.Equal(t, "create a initial", rec.next(t))
	assert.ErrorIs(t, src.Start(t.Context(), newQueue(t)), source.ErrStarted, "a second Start while the first run is live")
	lists := inf.lists()
	require.Positive(t, lists, "the informer listed once to fill its store")
	stopFirst()

	inf.src.Add(cm("b")) // while no run watches: the store has it
	require.Eventually(t, func() bool {
		_, ok, _ := inf.informer.GetStore().GetByKey("ns/b")
		return ok
	}, 10*time.Second, 10*time.Millisecond)

	rec = drain(rec)
	require.NoError(t, src.Start(t.Context(), newQueue(t)))
	require.NoError(t, src.WaitForSync(t.Context()))
	got := []string{rec.next(t), rec.next(t)}
	slices.Sort(got)
	assert.Equal(t, []string{"create a initial", "create b initial"}, got, "the second run gets the store as initial adds")
	assert.Equal(t, lists, inf.lists(), "no new list")

	inf.src.Modify(cm("a"))
	assert.Equal(t, "update a", rec.next(t), "the second run gets live events")
}

// drain discards what rec has recorded so far (the first run's events, and
// any the first run's registration still had in flight) and returns it.
func drain(rec *recorder) *recorder {
	for {
		select {
		case <-rec.events:
		case <-time.After(100 * time.Millisecond):
			return rec
		}
	}
}

// A Channel source started again after its previous ctx ended receives
// again; values sent in between wait in the channel.
func TestChannelStartAgain(t *testing.T) {
	ch := make(chan handler.GenericEvent, 1)
	rec := newRecorder()
	src := source.Channel(ch, rec)
	first, stopFirst := context.WithCancel(t.Context())
	require.NoError(t, src.Start(first, newQueue(t)))
	ch <- handler.GenericEvent{Object: cm("a")}
	assert.Equal(t, "generic a", rec.next(t))
	stopFirst()

	require.NoError(t, src.Start(t.Context(), newQueue(t)))
	// The first run's goroutine may take one value before it sees its ctx
	// end; every later one can only be the second run's.
	for _, name := range []string{"b", "c", "d"} {
		ch <- handler.GenericEvent{Object: cm(name)}
		assert.Equal(t, "generic "+name, rec.next(t))
	}
	assert.ErrorIs(t, src.Start(t.Context(), newQueue(t)), source.ErrStarted)
}

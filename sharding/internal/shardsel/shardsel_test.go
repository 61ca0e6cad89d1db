package shardsel

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSetClosesChanged(t *testing.T) {
	s := New("a")
	sel, gen, changed := s.Shard()
	assert.Equal(t, "a", sel)
	assert.Equal(t, uint64(1), gen)
	assert.Equal(t, uint64(1), s.Set("a"), "the same selector is no change")
	select {
	case <-changed:
		t.Fatal("closed without a change")
	default:
	}
	assert.Equal(t, uint64(2), s.Set("b"))
	<-changed
	sel, gen, _ = s.Shard()
	assert.Equal(t, "b", sel)
	assert.Equal(t, uint64(2), gen)
}

func TestStoredWaitsForEveryInformer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New("a")
		one, two := new(int), new(int)
		s.Listing(one, 1)
		s.Listing(two, 1)
		s.Listed(one, 1)
		s.Listed(two, 1)
		gen := s.Set("b")
		done := make(chan bool, 1)
		go func() { done <- s.Stored(context.Background(), gen) }()
		synctest.Wait()
		assert.Empty(t, done, "no informer stored generation 2 yet")
		s.Listing(one, gen)
		s.Listed(one, gen)
		synctest.Wait()
		assert.Empty(t, done, "one of two")
		s.Listed(two, 1) // an old generation again changes nothing
		s.Listing(two, gen)
		s.Listed(two, gen)
		synctest.Wait()
		assert.True(t, <-done)

		// A context that ends ends the wait.
		gen = s.Set("c")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		assert.False(t, s.Stored(ctx, gen))
	})
}

func TestStoredWithoutInformers(t *testing.T) {
	s := New("a")
	assert.True(t, s.Stored(context.Background(), s.Set("b")), "nothing listed: nothing to wait for")
}

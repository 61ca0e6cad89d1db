package informer

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProgressWait: a waiter returns once an advance reaches its version,
// not before; a version already passed returns at once; an ended context
// returns false; versions that are not numbers and lower versions do not
// move progress.
func TestProgressWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var p progress
		p.advance("10")
		require.True(t, p.wait(t.Context(), 10), "passed already")

		done := make(chan bool, 1)
		go func() { done <- p.wait(t.Context(), 12) }()
		synctest.Wait()
		p.advance("11")
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("woke at 11 for 12")
		default:
		}
		p.advance("abc")
		p.advance("9")
		assert.Equal(t, uint64(11), p.rv.Load())
		p.advance("12")
		synctest.Wait()
		require.True(t, <-done)
		assert.Zero(t, p.waiting.Load())

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		assert.False(t, p.wait(ctx, 100))
		assert.Zero(t, p.waiting.Load())
	})
}

// TestProgressWaitRace: many waiters and an advancing writer; every waiter
// returns once the writer passed its version (run under -race).
func TestProgressWaitRace(t *testing.T) {
	var p progress
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			assert.True(t, p.wait(t.Context(), uint64(1+i*20)))
			assert.GreaterOrEqual(t, p.rv.Load(), uint64(1+i*20))
		})
	}
	for v := 1; v <= 1000; v++ {
		p.advance(strconv.Itoa(v))
	}
	wg.Wait()
}

package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
)

func key(s string) authKey { return newKeyWriter().string(s).sum() }

func TestAuthKeyIsLengthPrefixed(t *testing.T) {
	assert.NotEqual(t, newKeyWriter().string("ab").string("c").sum(), newKeyWriter().string("a").string("bc").sum())
	assert.Equal(t, key("x"), key("x"))
}

func TestAuthLRUBound(t *testing.T) {
	c := newAuthLRU[int](100)
	now := time.Now()
	for i := range 400 {
		c.add(key(fmt.Sprint(i)), i, now.Add(time.Minute))
		// Key 0 is used again and again: it stays.
		_, ok := c.get(key("0"), now)
		require.True(t, ok, "key 0 after adding %d", i)
		require.LessOrEqual(t, c.len(), 100)
	}
	assert.Equal(t, 100, c.len())
	assert.Len(t, c.items, 100, "the index is bounded too")
	_, ok := c.get(key("1"), now)
	assert.False(t, ok, "the least recently used entries were evicted")
	v, ok := c.get(key("399"), now)
	assert.True(t, ok)
	assert.Equal(t, 399, v)
}

func TestAuthLRUExpiry(t *testing.T) {
	c := newAuthLRU[int](10)
	now := time.Now()
	c.add(key("a"), 1, now.Add(time.Second))
	_, ok := c.get(key("a"), now.Add(999*time.Millisecond))
	assert.True(t, ok)
	_, ok = c.get(key("a"), now.Add(time.Second))
	assert.False(t, ok)
	assert.Equal(t, 0, c.len(), "an expired entry looked up is dropped")
}

// counted is a review that counts its calls and answers ok, err.
type counted struct {
	mu    sync.Mutex
	calls int
	ok    bool
	err   error
}

func (c *counted) review() (string, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return "alice", c.ok, c.err
}

func (c *counted) n() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls
}

func TestReviewCacheTTLs(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		ttl  time.Duration
	}{
		{"positive", true, time.Minute},
		{"negative", false, 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newReviewCache[string](10, time.Minute, 10*time.Second)
				r := &counted{ok: tc.ok}
				for range 30 {
					v, ok, err := c.do(t.Context(), key("tok"), r.review)
					require.NoError(t, err)
					assert.Equal(t, tc.ok, ok)
					assert.Equal(t, "alice", v)
				}
				assert.Equal(t, 1, r.n(), "30 lookups, one review")
				time.Sleep(tc.ttl - time.Millisecond)
				_, _, _ = c.do(t.Context(), key("tok"), r.review)
				assert.Equal(t, 1, r.n(), "still cached just before the TTL")
				time.Sleep(time.Millisecond)
				_, _, _ = c.do(t.Context(), key("tok"), r.review)
				assert.Equal(t, 2, r.n(), "reviewed again at the TTL")
			})
		})
	}
}

func TestReviewCacheNegativeTTLCachesNothing(t *testing.T) {
	c := newReviewCache[string](10, -1, -1)
	for _, ok := range []bool{true, false} {
		r := &counted{ok: ok}
		for range 3 {
			_, _, err := c.do(t.Context(), key("tok"), r.review)
			require.NoError(t, err)
		}
		assert.Equal(t, 3, r.n(), "ok=%v", ok)
	}
}

func TestReviewCacheDoesNotCacheErrors(t *testing.T) {
	c := newReviewCache[string](10, time.Minute, time.Minute)
	boom := errors.New("connection refused")
	r := &counted{err: boom}
	for range 3 {
		_, _, err := c.do(t.Context(), key("tok"), r.review)
		assert.ErrorIs(t, err, boom)
	}
	assert.Equal(t, 3, r.n(), "every request tries again")
	r.err, r.ok = nil, true
	_, ok, err := c.do(t.Context(), key("tok"), r.review)
	require.NoError(t, err)
	assert.True(t, ok, "the API server back, the answer is the review's")
}

func TestReviewCacheNegativeAnswersDoNotEvictPositive(t *testing.T) {
	c := newReviewCache[string](5, time.Minute, time.Minute)
	good := &counted{ok: true}
	_, _, _ = c.do(t.Context(), key("good"), good.review)
	garbage := &counted{}
	for i := range 50 {
		_, _, _ = c.do(t.Context(), key(fmt.Sprint("garbage", i)), garbage.review)
	}
	_, ok, _ := c.do(t.Context(), key("good"), good.review)
	assert.True(t, ok)
	assert.Equal(t, 1, good.n(), "the valid token stayed cached")
	pos, neg := c.lens()
	assert.Equal(t, 1, pos)
	assert.Equal(t, 5, neg, "negative answers are bounded")
}

func TestReviewCacheCollapsesConcurrentMisses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newReviewCache[string](10, time.Minute, time.Minute)
		release := make(chan struct{})
		var mu sync.Mutex
		calls := 0
		review := func() (string, bool, error) {
			mu.Lock()
			calls++
			mu.Unlock()
			<-release
			return "alice", true, nil
		}
		var wg sync.WaitGroup
		results := make(chan string, 20)
		for range 20 {
			wg.Go(func() {
				v, ok, err := c.do(t.Context(), key("tok"), review)
				if err == nil && ok {
					results <- v
				}
			})
		}
		synctest.Wait() // all 20 are waiting on the one review
		close(release)
		wg.Wait()
		close(results)
		n := 0
		for v := range results {
			assert.Equal(t, "alice", v)
			n++
		}
		assert.Equal(t, 20, n)
		assert.Equal(t, 1, calls, "20 concurrent misses, one review")
	})
}

func TestReviewCacheWaiterHonoursItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newReviewCache[string](10, time.Minute, time.Minute)
		release := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, ok, err := c.do(t.Context(), key("tok"), func() (string, bool, error) { <-release; return "alice", true, nil })
			assert.NoError(t, err)
			assert.True(t, ok)
		}()
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, _, err := c.do(ctx, key("tok"), func() (string, bool, error) { t.Error("a second review ran"); return "", false, nil })
		assert.ErrorIs(t, err, context.Canceled)
		close(release)
		<-done
		_, ok, err := c.do(t.Context(), key("tok"), nil)
		require.NoError(t, err)
		assert.True(t, ok, "the shared review's answer was cached")
	})
}

func TestReviewCachePanickingReviewReleasesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newReviewCache[string](10, time.Minute, time.Minute)
		release := make(chan struct{})
		go func() {
			defer func() { assert.NotNil(t, recover()) }()
			_, _, _ = c.do(t.Context(), key("tok"), func() (string, bool, error) { <-release; panic("boom") })
		}()
		synctest.Wait()
		errc := make(chan error, 1)
		go func() {
			_, _, err := c.do(t.Context(), key("tok"), nil)
			errc <- err
		}()
		synctest.Wait()
		close(release)
		assert.ErrorIs(t, <-errc, errReviewPanicked)
		r := &counted{ok: true}
		_, ok, err := c.do(t.Context(), key("tok"), r.review)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, 1, r.n(), "the panic was not cached")
	})
}

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		name, give string
		want       string
		wantOK     bool
	}{
		{"canonical", "Bearer abc", "abc", true},
		{"lower case", "bearer abc", "abc", true},
		{"upper case", "BEARER abc", "abc", true},
		{"surrounding spaces", "  Bearer abc  ", "abc", true},
		{"extra field ignored", "Bearer abc def", "abc", true},
		{"two spaces: empty token", "Bearer  abc", "", false},
		{"no token", "Bearer", "", false},
		{"no token, trailing space", "Bearer ", "", false},
		{"other scheme", "Basic abc", "", false},
		{"no header", "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := http.NewRequest(http.MethodGet, "/metrics", nil)
			require.NoError(t, err)
			if tc.give != "" {
				r.Header.Set("Authorization", tc.give)
			}
			got, ok := bearerToken(r)
			assert.Equal(t, tc.wantOK, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestWithAuthenticatedGroup(t *testing.T) {
	for _, tc := range []struct {
		name string
		give authenticationv1.UserInfo
		want []string
	}{
		{"added", authenticationv1.UserInfo{Username: "alice", Groups: []string{"dev"}}, []string{"dev", "system:authenticated"}},
		{"no groups", authenticationv1.UserInfo{Username: "alice"}, []string{"system:authenticated"}},
		{"already there", authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:authenticated", "dev"}}, []string{"system:authenticated", "dev"}},
		{"unauthenticated", authenticationv1.UserInfo{Username: "alice", Groups: []string{"system:unauthenticated"}}, []string{"system:unauthenticated"}},
		{"anonymous", authenticationv1.UserInfo{Username: "system:anonymous"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, withAuthenticatedGroup(tc.give).Groups)
		})
	}
}

package controller

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
)

var otherReq = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: "other"}}

func TestProcessRequeueBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var attempts []time.Time
		c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			attempts = append(attempts, time.Now())
			if len(attempts) == 5 {
				return reconcile.Result{}, nil
			}
			return reconcile.Result{Requeue: true}, nil //nolint:staticcheck // the deprecated field under test
		}), Options{})
		c.queue.Add(webReq)
		for i := range 4 {
			require.True(t, c.processNextWorkItem(t.Context())) // blocks until the backoff has passed
			assert.Equal(t, i+1, c.queue.NumRequeues(webReq), "Requeue goes through the rate limiter")
		}
		require.True(t, c.processNextWorkItem(t.Context()))
		assert.Equal(t, 0, c.queue.NumRequeues(webReq), "success resets the backoff")
		var delays []time.Duration
		for i := 1; i < len(attempts); i++ {
			delays = append(delays, attempts[i].Sub(attempts[i-1]))
		}
		assert.Equal(t, []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 40 * time.Millisecond}, delays)
		assert.Equal(t, map[string]float64{"success": 1, "error": 0, "requeue_after": 0, "requeue": 4}, results(t, c))
		assert.Equal(t, 0.0, value(t, c.metrics.Errors), "a requeue is not an error")
	})
}

func TestProcessRequeueOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		give      reconcile.Result
		giveErr   error
		wantDelay time.Duration
		wantCount map[string]float64
		wantWarn  bool
	}{
		{
			name:      "RequeueAfter wins over Requeue",
			give:      reconcile.Result{Requeue: true, RequeueAfter: time.Minute}, //nolint:staticcheck // under test
			wantDelay: time.Minute,
			wantCount: map[string]float64{"success": 0, "error": 0, "requeue_after": 1, "requeue": 0},
		},
		{
			name:      "an error wins over Requeue and RequeueAfter",
			give:      reconcile.Result{Requeue: true, RequeueAfter: time.Hour}, //nolint:staticcheck // under test
			giveErr:   errors.New("boom"),
			wantDelay: 5 * time.Millisecond,
			wantCount: map[string]float64{"success": 0, "error": 1, "requeue_after": 0, "requeue": 0},
			wantWarn:  true,
		},
		{
			name:      "a priority with an error warns of nothing",
			give:      reconcile.Result{Priority: ptr(3)},
			giveErr:   errors.New("boom"),
			wantDelay: 5 * time.Millisecond,
			wantCount: map[string]float64{"success": 0, "error": 1, "requeue_after": 0, "requeue": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var attempts []time.Time
				logs := &logBuffer{}
				c, _ := newTestController(t, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
					attempts = append(attempts, time.Now())
					if len(attempts) > 1 {
						return reconcile.Result{}, nil
					}
					return tt.give, tt.giveErr
				}), Options{Logger: logs.logger()})
				c.queue.Add(webReq)
				require.True(t, c.processNextWorkItem(t.Context()))
				assert.Equal(t, tt.wantCount, results(t, c))
				require.True(t, c.processNextWorkItem(t.Context()))
				require.Len(t, attempts, 2)
				assert.Equal(t, tt.wantDelay, attempts[1].Sub(attempts[0]))
				assert.Equal(t, tt.wantWarn, strings.Contains(logs.String(), "requeue fields are ignored"), logs.String())
			})
		})
	}
}

// TestProcessPriority checks that Result.Priority is the priority of the
// re-add: a Request re-added at a higher priority is served before one of
// priority 0 that was ready first, one re-added at a lower priority after.
func TestProcessPriority(t *testing.T) {
	tests := []struct {
		name string
		give func(prio int) (reconcile.Result, error)
	}{
		{name: "RequeueAfter", give: func(p int) (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Second, Priority: &p}, nil
		}},
		{name: "Requeue", give: func(p int) (reconcile.Result, error) {
			return reconcile.Result{Requeue: true, Priority: &p}, nil //nolint:staticcheck // under test
		}},
		{name: "error", give: func(p int) (reconcile.Result, error) {
			return reconcile.Result{Priority: &p}, errors.New("boom")
		}},
	}
	for _, tt := range tests {
		for _, prio := range []int{10, -10} {
			t.Run(tt.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var order []string
					c, _ := newTestController(t, reconcile.Func(func(_ context.Context, req reconcile.Request) (reconcile.Result, error) {
						order = append(order, req.Name)
						if req == webReq && len(order) == 1 {
							return tt.give(prio)
						}
						return reconcile.Result{}, nil
					}), Options{})
					c.queue.Add(webReq)
					require.True(t, c.processNextWorkItem(t.Context()))
					c.queue.Add(otherReq) // ready now, priority 0
					time.Sleep(2 * time.Second)
					synctest.Wait() // webReq is ready again too
					require.True(t, c.processNextWorkItem(t.Context()))
					require.True(t, c.processNextWorkItem(t.Context()))
					if prio > 0 {
						assert.Equal(t, []string{"web", "web", "other"}, order, "priority %d is served first", prio)
					} else {
						assert.Equal(t, []string{"web", "other", "web"}, order, "priority %d is served last", prio)
					}
				})
			})
		}
	}
}

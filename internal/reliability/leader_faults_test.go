package reliability_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/leaderelection"
	"github.com/kubeloop/kubeloop/manager"
)

// candidate is one manager campaigning for a lease through a proxy of its
// own, with a leader-only runnable recorded by an oracle.
type candidate struct {
	proxy *faultproxy.Proxy
	run   *running
}

func campaign(t *testing.T, o *leaderOracle, lease, who string, release bool) *candidate {
	t.Helper()
	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	mgr := newManager(t, p.Config(), "default", manager.Options{
		LeaderElection: true, LeaderElectionID: lease, LeaderElectionNamespace: "default",
		LeaderElectionIdentity: who, LeaderElectionReleaseOnCancel: release,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		GracefulShutdownTimeout: time.Second,
	})
	require.NoError(t, mgr.Add(o.runnable(who)))
	c := &candidate{proxy: p, run: start(mgr)}
	t.Cleanup(func() {
		c.run.cancel()
		if _, ok := c.result(30 * time.Second); !ok { // hang bound
			t.Errorf("%s did not stop", who)
		}
	})
	return c
}

// result waits up to d for Start to return and returns its error; it may
// be called again (the result is put back).
func (c *candidate) result(d time.Duration) (error, bool) {
	select {
	case err := <-c.run.done:
		c.run.done <- err
		return err, true
	case <-time.After(d):
		return nil, false
	}
}

// stop cancels the candidate and returns Start's result.
func (c *candidate) stop(t *testing.T) error {
	t.Helper()
	c.run.cancel()
	err, ok := c.result(30 * time.Second) // hang bound
	if !ok {
		t.Fatal("Start did not return within 30s of cancel")
	}
	return err
}

// leaseWrites matches the PUTs of the lease named lease.
func leaseWrites(lease string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/leases/"+lease)
	}
}

func isLeaseWrite(lease string) func(faultproxy.Record) bool {
	return func(r faultproxy.Record) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.Path, "/leases/"+lease)
	}
}

func holder(t *testing.T, lease string) string {
	t.Helper()
	l, err := admin.CoordinationV1().Leases("default").Get(context.Background(), lease, metav1.GetOptions{})
	require.NoError(t, err)
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// acting reports whether who's leader-only runnable is running now.
func (o *leaderOracle) acting(who string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, iv := range o.intervals {
		if iv.who == who && iv.end.IsZero() {
			return true
		}
	}
	return false
}

func (o *leaderOracle) endOf(who string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, iv := range o.intervals {
		if iv.who == who {
			return iv.end
		}
	}
	return time.Time{}
}

func (o *leaderOracle) startedCount(who string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, iv := range o.intervals {
		if iv.who == who {
			n++
		}
	}
	return n
}

// TestOneHungLeaseWriteKeepsTheLease hangs exactly one renewal of the
// leader's: the lease requests time out after max(1s, RenewDeadline/2), so
// the next renewal comes in time and the leader keeps leading.
func TestOneHungLeaseWriteKeepsTheLease(t *testing.T) {
	lease := unique("hung")
	o := &leaderOracle{started: make(chan string, 8)}
	a := campaign(t, o, lease, "a", false)
	require.Equal(t, "a", o.next(t))

	var held atomic.Int64
	match := leaseWrites(lease)
	since := time.Now()
	a.proxy.AddRule(faultproxy.Rule{Match: func(r *http.Request) bool {
		if match(r) {
			held.Add(1)
			return true
		}
		return false
	}, Hold: true, Times: 1})
	time.Sleep(3 * renewDeadline)

	writes := a.proxy.Count(since, isLeaseWrite(lease))
	t.Logf("lease writes in %s: %d, one of them held", 3*renewDeadline, writes)
	require.Equal(t, int64(1), held.Load(), "exactly one renewal was held")
	assert.Greater(t, writes, 2, "renewals went on after the held one")
	assert.True(t, o.acting("a"), "the leader still acts")
	assert.Equal(t, "a", holder(t, lease), "the leader still holds the lease")
	if err, stopped := a.result(0); stopped {
		t.Fatalf("the leader's manager stopped: %v", err)
	}
}

// TestLeaseWritesFailing500 answers every lease write of the leader with
// 500 while every other request works: leadership ends within
// RenewDeadline plus RetryPeriod of the last renewal that got through, and
// Start reports the lost lease.
func TestLeaseWritesFailing500(t *testing.T) {
	lease := unique("fail500")
	o := &leaderOracle{started: make(chan string, 8)}
	a := campaign(t, o, lease, "a", false)
	require.Equal(t, "a", o.next(t))
	time.Sleep(3 * retryPeriod) // renewing

	a.proxy.AddRule(faultproxy.Rule{Match: leaseWrites(lease), Status: http.StatusInternalServerError})
	fault := time.Now()
	err, ok := a.result(3 * (leaseDuration + renewDeadline)) // hang bound
	require.True(t, ok, "the leader's manager did not stop")
	assert.True(t, errors.Is(err, leaderelection.ErrLeaderElectionLost), "Start reports the lost lease: %v", err)

	var lastOK time.Time
	failed := 0
	for _, r := range a.proxy.Records() {
		if !isLeaseWrite(lease)(r) {
			continue
		}
		switch {
		case r.Status == 0 && r.Time.Before(fault):
			lastOK = r.Time
		case r.Status == http.StatusInternalServerError:
			failed++
		}
	}
	stopped := o.endOf("a")
	require.False(t, lastOK.IsZero())
	require.False(t, stopped.IsZero(), "the leader-only runnable was stopped")
	lostAfter := stopped.Sub(lastOK)
	t.Logf("last renewal through %s before the fault; %d renewals answered 500; leader-only work stopped %s after the last renewal (bound %s)",
		fault.Sub(lastOK), failed, lostAfter, renewDeadline+retryPeriod)
	assert.Positive(t, failed, "the renewals met the fault")
	assert.LessOrEqual(t, lostAfter, renewDeadline+retryPeriod, "leadership lost within RenewDeadline + RetryPeriod")
}

// TestStoppedStandbyNeverLeads stops standbys while the leader lives, one
// of them at the moment the leader gives the lease up: a manager that is
// stopping never starts its leader-only runnables, even if it wins the
// lease on its way out.
func TestStoppedStandbyNeverLeads(t *testing.T) {
	lease := unique("standby")
	o := &leaderOracle{started: make(chan string, 8)}
	a := campaign(t, o, lease, "a", true)
	require.Equal(t, "a", o.next(t))

	b := campaign(t, o, lease, "b", false)
	c := campaign(t, o, lease, "c", false)
	time.Sleep(3 * retryPeriod) // both campaign as standbys
	require.NoError(t, b.stop(t), "a standby stops cleanly")

	// c stops as a gives the lease up: c's elector may win it on the
	// way out, but c must not start acting.
	c.run.cancel()
	a.run.cancel()
	for _, x := range []*candidate{a, c} {
		assert.NoError(t, x.stop(t))
	}
	time.Sleep(leaseDuration) // anything late would start by now
	assert.Equal(t, 1, o.startedCount("a"))
	assert.Zero(t, o.startedCount("b"), "the stopped standby b never acted")
	assert.Zero(t, o.startedCount("c"), "the standby c, stopping as the lease was released, never acted")
	t.Logf("lease holder after all stopped: %q", holder(t, lease))
}

// releases matches the writes of a lease that give it up (an empty
// holder), and puts the body back for the proxy to forward. Lease writes
// travel as protobuf or JSON; the universal deserializer reads both.
func releases(r *http.Request) bool {
	if r.Body == nil {
		return false
	}
	b, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return false
	}
	obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(b, nil, nil)
	l, ok := obj.(*coordinationv1.Lease)
	return err == nil && ok && (l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "")
}

// TestReleaseRetriedOnConflict answers the leader's release of the lease
// with one 409: the release is retried, the lease ends up released, and
// the standby takes over well before LeaseDuration.
func TestReleaseRetriedOnConflict(t *testing.T) {
	lease := unique("release")
	o := &leaderOracle{started: make(chan string, 8)}
	a := campaign(t, o, lease, "a", true)
	require.Equal(t, "a", o.next(t))
	campaign(t, o, lease, "b", false)
	time.Sleep(3 * retryPeriod)

	since := time.Now()
	// The release writes an empty holder; renewals write "a".
	a.proxy.AddRule(faultproxy.Rule{
		Match:  faultproxy.And(leaseWrites(lease), releases),
		Status: http.StatusConflict, Times: 1,
	})
	require.NoError(t, a.stop(t))
	released := time.Now()
	require.Equal(t, "b", o.next(t), "the standby takes over")
	took := time.Since(released)

	conflicts := a.proxy.Count(since, func(r faultproxy.Record) bool {
		return isLeaseWrite(lease)(r) && r.Status == http.StatusConflict
	})
	writes := a.proxy.Count(since, func(r faultproxy.Record) bool { return isLeaseWrite(lease)(r) && r.Status == 0 })
	t.Logf("release: %d conflict, %d writes through; standby acquired %s after the leader stopped", conflicts, writes, took)
	assert.Equal(t, 1, conflicts, "the release met the conflict")
	assert.Positive(t, writes, "the release was retried after the conflict")
	assert.Less(t, took, leaseDuration, "the standby did not wait for the lease to expire: it was released")
	assert.Equal(t, "b", holder(t, lease))
}

package sharding_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	admissionv1 "k8s.io/api/admission/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/interceptor"
	"github.com/kubeloop/kubeloop/reconcile"
	"github.com/kubeloop/kubeloop/sharding"
)

func cmReq(name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "default", Name: name}}
}

func shardLease(t *testing.T, c client.Client, shard string) *coordinationv1.Lease {
	t.Helper()
	l := &coordinationv1.Lease{}
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: ringName + "-shard-" + shard}, l))
	return l
}

func TestGateHandsOverADrainingObject(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil,
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "moving",
				Labels: map[string]string{shardKey: "a", drainKey: "1", "app": "x"}}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "staying",
				Labels: map[string]string{shardKey: "a"}}})
		r := newRing(t, c, "a")
		var calls atomic.Int32
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)

		// Before the Lease is held nothing is reconciled.
		res, err := g.Reconcile(context.Background(), cmReq("staying"))
		require.NoError(t, err)
		assert.NotZero(t, res.RequeueAfter)
		assert.Zero(t, calls.Load())

		stop, _ := startRing(t, r)
		synctest.Wait()
		require.NoError(t, r.Checker(nil))

		_, err = g.Reconcile(context.Background(), cmReq("staying"))
		require.NoError(t, err)
		assert.Equal(t, int32(1), calls.Load())

		_, err = g.Reconcile(context.Background(), cmReq("moving"))
		require.NoError(t, err)
		assert.Equal(t, int32(1), calls.Load(), "a draining object is acknowledged, not reconciled")
		cm := &corev1.ConfigMap{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "moving"}, cm))
		assert.Equal(t, map[string]string{"app": "x"}, cm.Labels, "the shard and drain labels are gone, others stay")

		// The object left this shard's cache: the NotFound is not a deletion.
		require.NoError(t, c.Delete(context.Background(), cm))
		_, err = g.Reconcile(context.Background(), cmReq("moving"))
		require.NoError(t, err)
		assert.Equal(t, int32(1), calls.Load())
		// A later NotFound is a deletion again.
		_, err = g.Reconcile(context.Background(), cmReq("moving"))
		require.NoError(t, err)
		assert.Equal(t, int32(2), calls.Load())
		require.NoError(t, stop())
	})
}

// TestGateForgetsAHandoverWhenTheObjectComesBack: an object handed over
// and assigned to this shard again (a webhook whose view of the ring had
// changed since the drain was requested, for example when the shard it
// was draining to was killed) is this shard's again: its deletion later
// reaches the reconciler.
func TestGateForgetsAHandoverWhenTheObjectComesBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x",
			Labels: map[string]string{shardKey: "a", drainKey: "1"}}})
		r := newRing(t, c, "a")
		var calls, notFound atomic.Int32
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
			calls.Add(1)
			if err := c.Get(ctx, req.NamespacedName, &corev1.ConfigMap{}); err != nil {
				require.True(t, apierrors.IsNotFound(err), err)
				notFound.Add(1)
			}
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		stop, _ := startRing(t, r)
		synctest.Wait()
		require.NoError(t, r.Checker(nil))

		_, err = g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.Zero(t, calls.Load(), "a draining object is acknowledged, not reconciled")
		cm := &corev1.ConfigMap{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "x"}, cm))
		require.Empty(t, cm.Labels, "acknowledged")

		// Assigned to a again: an ordinary reconcile.
		cm.Labels = map[string]string{shardKey: "a"}
		require.NoError(t, c.Update(context.Background(), cm))
		_, err = g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.Equal(t, int32(1), calls.Load())

		// Deleted while it is a's: the NotFound is a deletion.
		require.NoError(t, c.Delete(context.Background(), cm))
		_, err = g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.Equal(t, int32(2), calls.Load(), "the deletion reaches the reconciler")
		assert.Equal(t, int32(1), notFound.Load())
		require.NoError(t, stop())
	})
}

func TestGateDoesNotHandOverWhatIsNoLongerItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The API server says b; this shard's (stale) cache says a, draining.
		c := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x",
			Labels: map[string]string{shardKey: "b"}}})
		stale := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x",
			Labels: map[string]string{shardKey: "a", drainKey: "1"}}})
		putLease(t, c, "b", 0) // b is alive: the sharder (this ring) leaves x alone
		r := newRing(t, c, "a")
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			t.Error("inner must not run")
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		stop, _ := runRing(t, r, stale)
		synctest.Wait()
		_, err = g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err, "a failed test operation means: already handed over")
		cm := &corev1.ConfigMap{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "x"}, cm))
		assert.Equal(t, "b", cm.Labels[shardKey], "the new shard's label is untouched")
		require.NoError(t, stop())
	})
}

// TestFencing: a shard that cannot renew stops reconciling, and cancels
// the reconcile in flight, before its Lease can be taken over; with
// ExitOnLeaseLoss, Start then returns ErrLeaseLost.
func TestFencing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var failing atomic.Bool
		c := newFake(t, &interceptor.Funcs{Update: func(ctx context.Context, cl client.Client, obj client.Object, opts ...client.UpdateOption) error {
			if _, ok := obj.(*coordinationv1.Lease); ok && failing.Load() && obj.GetName() == ringName+"-shard-a" {
				return errors.New("connection refused")
			}
			return cl.Update(ctx, obj, opts...)
		}}, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x", Labels: map[string]string{shardKey: "a"}}})
		r := newRing(t, c, "a", func(o *sharding.Options) { o.ExitOnLeaseLoss = true })
		var cancelledAt atomic.Pointer[time.Time]
		started := make(chan struct{})
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
			close(started)
			<-ctx.Done()
			now := time.Now()
			cancelledAt.Store(&now)
			return reconcile.Result{}, ctx.Err()
		}))
		require.NoError(t, err)
		_, done := startRing(t, r)
		synctest.Wait()
		go func() { _, _ = g.Reconcile(context.Background(), cmReq("x")) }()
		<-started

		time.Sleep(3 * time.Second) // a renewal or two
		failing.Store(true)
		l := shardLease(t, c, "a")
		expiry := l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second)

		var fencedAt time.Time
		for time.Now().Before(expiry.Add(time.Second)) {
			if r.Checker(nil) != nil && fencedAt.IsZero() {
				fencedAt = time.Now()
			}
			time.Sleep(100 * time.Millisecond)
		}
		require.False(t, fencedAt.IsZero(), "the shard fenced itself")
		assert.True(t, fencedAt.Before(expiry), "fenced at %s, before the Lease expires at %s", fencedAt, expiry)
		require.NotNil(t, cancelledAt.Load())
		assert.True(t, cancelledAt.Load().Before(expiry), "the reconcile in flight was cancelled before expiry")
		assert.Equal(t, l.Spec.RenewTime.Time, shardLease(t, c, "a").Spec.RenewTime.Time, "no renewal got through")

		select {
		case err := <-done:
			require.ErrorIs(t, err, sharding.ErrLeaseLost)
			require.ErrorIs(t, err, client.ErrLeaseLost, "one sentinel")
			assert.Contains(t, err.Error(), `sharding: ring "test" shard "a"`)
		default:
			t.Fatal("Start did not return after the lease was lost")
		}
		res, err := g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.NotZero(t, res.RequeueAfter, "a fenced shard reconciles nothing")
	})
}

// TestGracefulStopWaitsThenReleases: the Lease is released only after the
// reconcile in flight returned, and new ones are refused meanwhile.
func TestGracefulStopWaitsThenReleases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x", Labels: map[string]string{shardKey: "a"}}})
		r := newRing(t, c, "a")
		release := make(chan struct{})
		var calls atomic.Int32
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
			if calls.Add(1) == 1 {
				<-release
			}
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		stop, _ := startRing(t, r)
		synctest.Wait()
		go func() { _, _ = g.Reconcile(context.Background(), cmReq("x")) }()
		synctest.Wait()

		stopped := make(chan error, 1)
		go func() { stopped <- stop() }()
		time.Sleep(time.Second)
		synctest.Wait()
		holder := ptr.Deref(shardLease(t, c, "a").Spec.HolderIdentity, "")
		assert.NotEmpty(t, holder, "held while a reconcile runs")
		res, err := g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.NotZero(t, res.RequeueAfter, "no new reconcile while stopping")
		assert.Equal(t, int32(1), calls.Load())

		close(release)
		require.NoError(t, <-stopped)
		assert.Empty(t, ptr.Deref(shardLease(t, c, "a").Spec.HolderIdentity, "x"), "released")
		// The sharder sees a gone shard at once.
		putLease(t, c, "b", 0)
		s := newRing(t, c, "b")
		_, err = s.Sweep(context.Background())
		require.NoError(t, err)
		cm := &corev1.ConfigMap{}
		require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "x"}, cm))
		assert.Equal(t, "b", cm.Labels[shardKey])
	})
}

// TestSecondInstanceWaitsForExpiry: a process that takes the name of a
// shard whose Lease another instance holds waits for it to expire, and,
// having taken the Lease over, reconciles only RenewDeadline later (the
// sharder may have been moving the earlier instance's objects), like a
// rejoin.
func TestSecondInstanceWaitsForExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x", Labels: map[string]string{shardKey: "a"}}})
		putLeaseFor(t, c, "a", 0, 15*time.Second) // held by another instance, just renewed
		r := newRing(t, c, "a")
		var calls atomic.Int32
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		start := time.Now()
		stop, _ := startRing(t, r)
		for r.Checker(nil) != nil {
			time.Sleep(100 * time.Millisecond)
		}
		held := time.Now()
		assert.GreaterOrEqual(t, held.Sub(start), 15*time.Second)
		for calls.Load() == 0 {
			res, err := g.Reconcile(context.Background(), cmReq("x"))
			require.NoError(t, err)
			if calls.Load() == 0 {
				assert.NotZero(t, res.RequeueAfter)
			}
		}
		// held is read by a 100 ms poll, after the takeover.
		assert.GreaterOrEqual(t, time.Since(held), 10*time.Second-100*time.Millisecond, "admitted RenewDeadline after the takeover")
		require.NoError(t, stop())
	})
}

// TestFreshLeaseAdmitsAtOnce: a shard whose Lease did not exist admits
// reconciles as soon as it created it.
func TestFreshLeaseAdmitsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x", Labels: map[string]string{shardKey: "a"}}})
		r := newRing(t, c, "a")
		var calls atomic.Int32
		g, err := r.Reconciler(&corev1.ConfigMap{}, reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{}, nil
		}))
		require.NoError(t, err)
		stop, _ := startRing(t, r)
		synctest.Wait()
		start := time.Now()
		_, err = g.Reconcile(context.Background(), cmReq("x"))
		require.NoError(t, err)
		assert.Equal(t, int32(1), calls.Load())
		assert.Zero(t, time.Since(start))
		require.NoError(t, stop())
	})
}

func review(t *testing.T, op admissionv1.Operation, obj, old *corev1.ConfigMap) *admissionv1.AdmissionResponse {
	t.Helper()
	raw := func(o *corev1.ConfigMap) runtime.RawExtension {
		if o == nil {
			return runtime.RawExtension{}
		}
		b, err := json.Marshal(o)
		require.NoError(t, err)
		return runtime.RawExtension{Raw: b}
	}
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{UID: "u", Operation: op, Kind: metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Namespace: obj.Namespace, Name: obj.Name, Object: raw(obj), OldObject: raw(old)},
	})
	require.NoError(t, err)
	return post(t, body)
}

var webhookRing *sharding.Ring

func post(t *testing.T, body []byte) *admissionv1.AdmissionResponse {
	rec := httptest.NewRecorder()
	hr := httptest.NewRequest(http.MethodPost, "/shard-test", bytes.NewReader(body))
	hr.Header.Set("Content-Type", "application/json")
	webhookRing.WebhookHandler().ServeHTTP(rec, hr)
	require.Equal(t, http.StatusOK, rec.Code)
	var out admissionv1.AdmissionReview
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
	return out.Response
}

func TestWebhook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil)
		putLease(t, c, "b", 0)
		webhookRing = newRing(t, c, "a")
		cm := func(name string, labels map[string]string) *corev1.ConfigMap {
			return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels}}
		}
		// No view yet: admitted unchanged.
		resp := review(t, admissionv1.Create, cm("early", nil), nil)
		assert.True(t, resp.Allowed)
		assert.Empty(t, resp.Patch)

		stop, _ := startRing(t, webhookRing)
		synctest.Wait()
		assert.Equal(t, []string{"a", "b"}, webhookRing.Shards())

		patch := func(resp *admissionv1.AdmissionResponse) string {
			require.True(t, resp.Allowed)
			return string(resp.Patch)
		}
		w := want([]string{"a", "b"}, "new")
		assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels","value":{"shard.sharding.kubeloop.dev/test":"`+w+`"}}]`,
			patch(review(t, admissionv1.Create, cm("new", nil), nil)))
		assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels/shard.sharding.kubeloop.dev~1test","value":"`+w+`"}]`,
			patch(review(t, admissionv1.Create, cm("new", map[string]string{"app": "x"}), nil)))
		assert.Empty(t, patch(review(t, admissionv1.Create, cm("new", map[string]string{shardKey: "zzz"}), nil)), "an assigned object is never moved")

		// An update that drops the label keeps the old shard.
		assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels/shard.sharding.kubeloop.dev~1test","value":"zzz"}]`,
			patch(review(t, admissionv1.Update, cm("new", map[string]string{"app": "x"}), cm("new", map[string]string{shardKey: "zzz"}))))
		// The acknowledgment of a drain gets the ring's shard.
		assert.JSONEq(t, `[{"op":"add","path":"/metadata/labels/shard.sharding.kubeloop.dev~1test","value":"`+w+`"}]`,
			patch(review(t, admissionv1.Update, cm("new", map[string]string{"app": "x"}), cm("new", map[string]string{shardKey: "zzz", drainKey: "1"}))))
		require.NoError(t, stop())
	})
}

func TestReconcilerDoesNotGateTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFake(t, nil, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mine",
			Labels: map[string]string{shardKey: "a"}}})
		r := newRing(t, c, "a", func(o *sharding.Options) { o.Controlled = []client.Object{&corev1.Secret{}} })
		var calls atomic.Int32
		inner := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			calls.Add(1)
			return reconcile.Result{}, nil
		})
		once, err := r.Reconciler(&corev1.ConfigMap{}, inner)
		require.NoError(t, err)
		twice, err := r.Reconciler(&corev1.ConfigMap{}, once)
		require.NoError(t, err)
		assert.Same(t, once, twice, "a gated reconciler is returned as is")

		other := newRing(t, c, "b", func(o *sharding.Options) { o.Ring = "other" })
		_, err = other.Reconciler(&corev1.ConfigMap{}, once)
		require.ErrorIs(t, err, sharding.ErrInvalidOptions, "a gate of another ring is not rewrapped silently")

		assert.True(t, r.Sharded(&corev1.ConfigMap{}))
		assert.True(t, r.Sharded(&corev1.Secret{}), "Controlled kinds are sharded too")
		assert.False(t, r.Sharded(&corev1.Pod{}))
		_, err = r.Reconciler(&corev1.Secret{}, inner)
		require.ErrorIs(t, err, sharding.ErrInvalidOptions, "a Controlled kind has no gate")

		stop, _ := startRing(t, r)
		synctest.Wait()
		_, err = twice.Reconcile(context.Background(), cmReq("mine"))
		require.NoError(t, err)
		assert.Equal(t, int32(1), calls.Load())
		require.NoError(t, stop())
	})
}

package manager_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
)

// termWriter is a leader-only runnable that hands out each term's context
// and, in its first term, keeps running after its context ended until
// release is closed (a runnable that does not notice the loss at once).
type termWriter struct {
	terms   chan context.Context
	release chan struct{}
	first   bool
}

func (w *termWriter) Start(ctx context.Context) error {
	w.terms <- ctx
	<-ctx.Done()
	if !w.first {
		w.first = true
		<-w.release
	}
	return nil
}

// TestLeaderOnlyWriteAfterLostLease: a leader-only runnable that writes
// after its manager lost the lease (it detached its context from the
// cancellation, as a clean-up write might) is refused with ErrLeaseLost
// by the manager's client, and the object on the server is unchanged;
// the refusal holds after the manager leads again, while the new term's
// writes go through. Without leader election nothing is fenced.
func TestLeaderOnlyWriteAfterLostLease(t *testing.T) {
	ctx := context.Background()
	admin, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: unique("fenced")}, Data: map[string]string{"v": "0"}}
	require.NoError(t, admin.Create(ctx, cm))
	t.Cleanup(func() { _ = admin.Delete(context.Background(), cm) })

	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	opts := electionOptions(unique("fence"), false)
	opts.LeaderElectionRecampaign = true
	opts.GracefulShutdownTimeout = 30 * time.Second
	mgr := newManager(t, p.Config(), opts)
	w := &termWriter{terms: make(chan context.Context, 2), release: make(chan struct{})}
	require.NoError(t, mgr.Add(w))
	run := start(mgr)
	var term1 context.Context
	select {
	case term1 = <-w.terms:
	case <-time.After(30 * time.Second):
		t.Fatal("not elected")
	}
	write := func(ctx context.Context, v string) error {
		var got corev1.ConfigMap
		if err := mgr.GetAPIReader().Get(ctx, client.ObjectKeyFromObject(cm), &got); err != nil {
			return err
		}
		got.Data["v"] = v
		return mgr.GetClient().Update(ctx, &got)
	}
	require.NoError(t, write(term1, "1"), "the leader writes")
	require.NotNil(t, client.FenceFrom(term1), "a leader-only runnable's context carries the term's fence")

	p.Blackhole(true)
	cut := time.Now()
	require.Eventually(t, func() bool {
		_, err := client.FenceFrom(term1).Remaining()
		return err != nil
	}, 3*(leaseDuration+renewDeadline), 10*time.Millisecond, "the fence refuses once the lease is not renewed")
	t.Logf("fenced %s after the cut (RenewDeadline %s)", time.Since(cut).Round(time.Millisecond), renewDeadline)
	p.Blackhole(false)

	detached := context.WithoutCancel(term1) // keeps the values, so the fence
	err = write(detached, "2")
	require.ErrorIs(t, err, client.ErrLeaseLost)
	assert.Contains(t, err.Error(), "update v1, Kind=ConfigMap default/"+cm.Name)
	assert.Contains(t, err.Error(), "lease default/"+opts.LeaderElectionID)
	var got corev1.ConfigMap
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(cm), &got))
	assert.Equal(t, "1", got.Data["v"], "the refused write never reached the server")

	close(w.release)
	var term2 context.Context
	select {
	case term2 = <-w.terms:
	case <-time.After(3 * (leaseDuration + renewDeadline)):
		t.Fatal("not elected again")
	}
	require.NoError(t, write(term2, "3"), "the new term writes")
	require.ErrorIs(t, write(detached, "4"), client.ErrLeaseLost, "the old term stays fenced after the new one began")
	require.NoError(t, admin.Get(ctx, client.ObjectKeyFromObject(cm), &got))
	assert.Equal(t, "3", got.Data["v"])
	require.NoError(t, run.stop(t))

	// Without leader election there is no lease and no fence.
	plain := newManager(t, restConfig, manager.Options{})
	got2 := make(chan context.Context, 1)
	require.NoError(t, plain.Add(manager.RunnableFunc(func(ctx context.Context) error {
		got2 <- ctx
		<-ctx.Done()
		return nil
	})))
	runPlain := start(plain)
	select {
	case c := <-got2:
		assert.Nil(t, client.FenceFrom(c))
	case <-time.After(30 * time.Second):
		t.Fatal("not started")
	}
	require.NoError(t, runPlain.stop(t))
}

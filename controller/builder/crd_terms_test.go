package builder_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/manager"
)

// TestWaitForCRDDeletedBetweenLeaderTerms: a manager that campaigns again
// after losing its lease keeps its caches between terms. A CRD deleted
// while it does not lead takes its kind's informer out of the cache (the
// cache stays healthy, nothing is logged at ERROR); in the next term the
// CRD, installed again, is followed as before.
func TestWaitForCRDDeletedBetweenLeaderTerms(t *testing.T) {
	suffix := string(uuid.NewUUID())[:8]
	group := "crdterms" + suffix + ".kubeloop.dev"
	live, ns := newNamespace(t)
	lease := "crd-terms-" + suffix

	var errs errorLog
	mgr, err := manager.New(cfg, manager.Options{
		Logger:                   errs.recording(t),
		LeaderElection:           true,
		LeaderElectionID:         lease,
		LeaderElectionNamespace:  ns,
		LeaderElectionRecampaign: true,
		LeaseDuration:            2 * time.Second,
		RenewDeadline:            1500 * time.Millisecond,
		RetryPeriod:              200 * time.Millisecond,
	})
	require.NoError(t, err)
	var reconciled names
	_, err = builder.ControllerManagedBy(mgr).
		For(widget(group, "", ""), builder.WaitForCRD).
		Named("terms-" + suffix).
		Build(reconciled.reconciler())
	require.NoError(t, err)
	seen := reconciled.has
	startUntilCleanup(t, mgr, live, "widgets."+group)

	// First term: the kind is served and followed.
	require.NoError(t, applyCRD(t, widgetCRD(group)))
	require.NoError(t, live.Create(t.Context(), widget(group, ns, "first")))
	require.Eventually(t, seen("first"), wait, 20*time.Millisecond, "first reconciled")

	// Another holder takes the lease for an hour: the manager loses it and
	// campaigns as a standby, its caches warm.
	setLease := func(change func(*coordinationv1.Lease)) {
		require.Eventually(t, func() bool { // the leader renews meanwhile: retry on conflict
			var l coordinationv1.Lease
			require.NoError(t, live.Get(t.Context(), client.ObjectKey{Namespace: ns, Name: lease}, &l))
			change(&l)
			err := live.Update(t.Context(), &l)
			require.True(t, err == nil || apierrors.IsConflict(err), "%v", err)
			return err == nil
		}, wait, 10*time.Millisecond)
	}
	setLease(func(l *coordinationv1.Lease) {
		now := metav1.NewMicroTime(time.Now())
		l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = ptr.To("someone-else"), ptr.To[int32](3600), &now
	})
	require.Eventually(t, func() bool { return leading(t, mgr) == 0 }, wait, 50*time.Millisecond, "the manager lost its lease")
	assert.True(t, holdsKind(mgr.GetCache(), group, "Widget"), "the kind's informer is kept between terms")

	// The CRD is deleted between terms: the informer goes, the cache stays
	// healthy.
	deleteCRD(t, live, "widgets."+group)
	require.Eventually(t, func() bool { return !holdsKind(mgr.GetCache(), group, "Widget") }, wait, 50*time.Millisecond,
		"the informer of a kind whose CRD was deleted between terms is removed")
	time.Sleep(2 * time.Second) // an informer left behind would fail its list or watch by now
	assert.NoError(t, mgr.GetCache().Healthy())

	// The lease expires: the next term follows the CRD again.
	setLease(func(l *coordinationv1.Lease) {
		past := metav1.NewMicroTime(time.Now().Add(-time.Hour))
		l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = ptr.To[int32](1), &past
	})
	require.Eventually(t, func() bool { return leading(t, mgr) == 1 }, wait, 50*time.Millisecond, "leads again")
	require.NoError(t, applyCRD(t, widgetCRD(group)))
	require.NoError(t, live.Create(t.Context(), widget(group, ns, "second")))
	require.Eventually(t, seen("second"), wait, 20*time.Millisecond, "second term: the re-installed kind is reconciled")
	assert.NoError(t, mgr.GetCache().Healthy())
	assert.Empty(t, errs.all(), "nothing logged at ERROR")
}

// leading returns the manager's leader_election_master_status, -1 if absent.
func leading(t *testing.T, mgr *manager.Manager) float64 {
	t.Helper()
	mfs, err := mgr.MetricsRegistry().Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "leader_election_master_status" && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	return -1
}

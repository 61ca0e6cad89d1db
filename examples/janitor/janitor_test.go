package janitor_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/janitor"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
)

var (
	cfg *rest.Config
	c   client.Client
)

func TestMain(m *testing.M) {
	testenv.Main(m, testenv.Options{
		Env: &envtest.Environment{},
		Setup: func(restConfig *rest.Config) error {
			cfg = restConfig
			var err error
			c, err = client.New(cfg, client.Options{})
			return err
		},
	})
}

// replica is one janitor process: a manager with leader election.
type replica struct {
	name    string
	mgr     *manager.Manager
	cancel  context.CancelFunc
	done    chan error
	once    sync.Once
	mu      sync.Mutex
	deleted []client.ObjectKey
}

func (r *replica) deletes() []client.ObjectKey {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]client.ObjectKey(nil), r.deleted...)
}

func (r *replica) elected() bool {
	select {
	case <-r.mgr.Elected():
		return true
	default:
		return false
	}
}

// stop ends the replica and waits for its manager to return. A second
// stop does nothing.
func (r *replica) stop(t *testing.T) {
	r.once.Do(func() {
		r.cancel()
		select {
		case err := <-r.done:
			assert.NoError(t, err, "replica %s", r.name)
		case <-time.After(30 * time.Second):
			t.Errorf("replica %s did not stop", r.name)
		}
	})
}

func startReplica(t *testing.T, lease, name string) *replica {
	t.Helper()
	mgr, err := manager.New(cfg, manager.Options{
		Logger:                        testenv.Logger(),
		LeaderElection:                true,
		LeaderElectionID:              lease,
		LeaderElectionNamespace:       "default",
		LeaderElectionIdentity:        name,
		LeaderElectionReleaseOnCancel: true,
		LeaseDuration:                 2 * time.Second,
		RenewDeadline:                 1500 * time.Millisecond,
		RetryPeriod:                   200 * time.Millisecond,
	})
	require.NoError(t, err)
	r := &replica{name: name, mgr: mgr, done: make(chan error, 1)}
	require.NoError(t, janitor.SetupWithManager(mgr, &janitor.Reconciler{OnDelete: func(k client.ObjectKey) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.deleted = append(r.deleted, k)
	}}))
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- mgr.Start(ctx) }()
	return r
}

func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "janitor-"}}
	require.NoError(t, c.Create(t.Context(), ns))
	return ns.Name
}

func configMap(t *testing.T, ns, name, ttl string) client.ObjectKey {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if ttl != "" {
		cm.Annotations = map[string]string{janitor.TTLAnnotation: ttl}
	}
	require.NoError(t, c.Create(t.Context(), cm))
	return client.ObjectKeyFromObject(cm)
}

func gone(t *testing.T, key client.ObjectKey) bool {
	err := c.Get(t.Context(), key, &corev1.ConfigMap{})
	if apierrors.IsNotFound(err) {
		return true
	}
	require.NoError(t, err)
	return false
}

func leaderOf(t *testing.T, rs ...*replica) *replica {
	t.Helper()
	var leader *replica
	require.Eventually(t, func() bool {
		n := 0
		for _, r := range rs {
			if r.elected() {
				leader, n = r, n+1
			}
		}
		return n == 1
	}, 30*time.Second, 20*time.Millisecond, "exactly one replica leads")
	return leader
}

func TestTwoReplicasOnlyTheLeaderDeletes(t *testing.T) {
	a, b := startReplica(t, "janitor-two", "a"), startReplica(t, "janitor-two", "b")
	defer b.stop(t)
	defer a.stop(t)
	leader := leaderOf(t, a, b)

	ns := newNamespace(t)
	soon1, soon2 := configMap(t, ns, "soon-1", "1s"), configMap(t, ns, "soon-2", "2s")
	keep, later := configMap(t, ns, "keep", ""), configMap(t, ns, "later", "1h")
	bad := configMap(t, ns, "bad", "whenever")

	require.Eventually(t, func() bool { return gone(t, soon1) && gone(t, soon2) }, 30*time.Second, 50*time.Millisecond,
		"expired ConfigMaps are deleted")
	// Give the janitor time to (wrongly) act on the others.
	time.Sleep(500 * time.Millisecond)
	assert.False(t, gone(t, keep), "a ConfigMap without a TTL stays")
	assert.False(t, gone(t, later), "a ConfigMap whose TTL has not run out stays")
	assert.False(t, gone(t, bad), "a ConfigMap with an unparsable TTL stays")

	follower := a
	if leader == a {
		follower = b
	}
	assert.ElementsMatch(t, []client.ObjectKey{soon1, soon2}, leader.deletes(), "the leader deleted both")
	assert.Empty(t, follower.deletes(), "the standby deleted nothing")
}

func TestStandbyTakesOver(t *testing.T) {
	a, b := startReplica(t, "janitor-failover", "a"), startReplica(t, "janitor-failover", "b")
	defer b.stop(t)
	defer a.stop(t)
	leader := leaderOf(t, a, b)
	standby := a
	if leader == a {
		standby = b
	}

	// The leader goes away (releasing its lease); an object that expires
	// afterwards is deleted by the standby.
	leader.stop(t)
	ns := newNamespace(t)
	key := configMap(t, ns, "after-failover", "1s")
	require.Eventually(t, standby.elected, 30*time.Second, 20*time.Millisecond, "the standby is elected")
	require.Eventually(t, func() bool { return gone(t, key) }, 30*time.Second, 50*time.Millisecond)
	// The reconciler records a delete after the API server answered it, so
	// the object can be gone a moment before the record is there.
	require.Eventually(t, func() bool { return slices.Contains(standby.deletes(), key) }, 5*time.Second, 10*time.Millisecond,
		"the standby deleted it")
	assert.NotContains(t, leader.deletes(), key)
}

package fleet_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/examples/fleet"
	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/multicluster"
)

// hub and member are the test's two control planes.
var hubEnv, memberEnv = &envtest.Environment{}, &envtest.Environment{}
var hubCfg, memberCfg *rest.Config

type twoPlanes struct{}

func (twoPlanes) Start() (*rest.Config, error) {
	var errs [2]error
	var wg sync.WaitGroup
	wg.Go(func() { hubCfg, errs[0] = hubEnv.Start() })
	wg.Go(func() { memberCfg, errs[1] = memberEnv.Start() })
	wg.Wait()
	return hubCfg, errors.Join(errs[:]...)
}

func (twoPlanes) Stop() error { return errors.Join(hubEnv.Stop(), memberEnv.Stop()) }

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{Env: twoPlanes{}}) }

// TestStampsEveryCluster: the operator stamps labelled ConfigMaps of its
// own cluster and of a member that joins while it runs, each with the
// right cluster name, and leaves unlabelled ones alone; once the member
// leaves, its new ConfigMaps are not stamped.
func TestStampsEveryCluster(t *testing.T) {
	var sink multicluster.Sink
	var runCtx context.Context
	ready := make(chan struct{})
	provider := multicluster.ProviderFunc(func(ctx context.Context, s multicluster.Sink) error {
		sink, runCtx = s, ctx
		close(ready)
		<-ctx.Done()
		return nil
	})
	mgr, err := manager.New(hubCfg, manager.Options{Clusters: provider, Logger: testenv.Logger()})
	require.NoError(t, err)
	require.NoError(t, fleet.SetupWithManager(mgr))
	stop := testenv.Start(mgr)
	defer func() { require.NoError(t, stop()) }()

	hub, member := direct(t, hubCfg), direct(t, memberCfg)
	create(t, hub, "hub-settings", true)
	create(t, member, "member-settings", true)
	create(t, member, "unlabelled", false)
	<-ready
	memberCtx, leave := context.WithCancel(runCtx)
	require.NoError(t, sink.Engage(memberCtx, "eu-1", memberCfg))

	waitData(t, hub, "hub-settings", fleet.HubName)
	waitData(t, member, "member-settings", "eu-1")
	assert.Equal(t, "", data(t, member, "unlabelled"), "the predicate keeps unlabelled ConfigMaps out")

	leave()
	require.Eventually(t, func() bool { return len(mgr.GetFleet().Clusters()) == 0 }, 30*time.Second, 20*time.Millisecond)
	create(t, member, "after-leaving", true)
	create(t, hub, "hub-after", true)
	waitData(t, hub, "hub-after", fleet.HubName)
	assert.Equal(t, "", data(t, member, "after-leaving"), "a cluster that left is not reconciled")
}

func direct(t *testing.T, cfg *rest.Config) client.Client {
	c, err := client.New(cfg, client.Options{})
	require.NoError(t, err)
	return c
}

func create(t *testing.T, c client.Client, name string, labelled bool) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	if labelled {
		cm.Labels = map[string]string{fleet.StampLabel: "true"}
	}
	require.NoError(t, c.Create(context.Background(), cm))
}

func data(t *testing.T, c client.Client, name string) string {
	var cm corev1.ConfigMap
	require.NoError(t, c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, &cm))
	return cm.Data["cluster"]
}

func waitData(t *testing.T, c client.Client, name, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return data(t, c, name) == want }, 30*time.Second, 20*time.Millisecond,
		"default/%s stamped %q", name, want)
}

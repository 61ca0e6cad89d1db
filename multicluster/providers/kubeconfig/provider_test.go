package kubeconfig_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
	"github.com/kubeloop/kubeloop/multicluster/providers/kubeconfig"
)

// hangGuard bounds each wait for the provider, so that a bug fails the
// test instead of hanging it; it is not a latency assertion.
const hangGuard = time.Minute

func setup(t *testing.T, ns string) (client.Client, context.Context) {
	t.Helper()
	c, err := client.New(restConfig, client.Options{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	t.Cleanup(cancel)
	require.NoError(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	return c, ctx
}

// kubeconfigOf returns a kubeconfig for the test control plane reached at
// host ("127.0.0.1" or "localhost", both in its serving certificate).
func kubeconfigOf(t *testing.T, host string) []byte {
	t.Helper()
	cfg := providertest.WithHost(restConfig, strings.Replace(restConfig.Host, "127.0.0.1", host, 1))
	data, err := providertest.Kubeconfig(map[string]*rest.Config{"c": cfg}, "c")
	require.NoError(t, err)
	return data
}

func secret(ns, name string, labels map[string]string, data []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Data:       map[string][]byte{kubeconfig.DefaultDataKey: data},
	}
}

var selected = map[string]string{kubeconfig.DefaultLabel: "true"}

func TestSecretsEngageReengageAndDisengage(t *testing.T) {
	const ns = "fleet"
	c, ctx := setup(t, ns)
	rec := providertest.NewRecorder()
	var logs providertest.Logs
	p, err := kubeconfig.New(restConfig, kubeconfig.Options{Namespace: ns, Logger: logs.Logger()})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)

	// Created: one engages; an unlabelled Secret and a broken one do not.
	one := secret(ns, "one", selected, kubeconfigOf(t, "127.0.0.1"))
	require.NoError(t, c.Create(ctx, one))
	require.NoError(t, c.Create(ctx, secret(ns, "unselected", nil, kubeconfigOf(t, "127.0.0.1"))))
	broken := secret(ns, "broken", selected, []byte("apiVersion: v1\nkind: Config\n"))
	require.NoError(t, c.Create(ctx, broken))
	require.NoError(t, rec.WaitNames(ctx, "one"))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["one"]), "the engaged config reaches the real control plane")
	require.NoError(t, logs.Wait(ctx, "Secret fleet/broken", "the kubeconfig has no contexts"))

	// Fixed: the broken Secret engages.
	broken.Data[kubeconfig.DefaultDataKey] = kubeconfigOf(t, "127.0.0.1")
	require.NoError(t, c.Update(ctx, broken))
	require.NoError(t, rec.WaitNames(ctx, "broken", "one"))

	// Changed kubeconfig bytes: the old context ends, the new config is
	// engaged and works. A change elsewhere in the Secret engages nothing.
	one.Data[kubeconfig.DefaultDataKey] = kubeconfigOf(t, "localhost")
	require.NoError(t, c.Update(ctx, one))
	require.NoError(t, rec.Wait(ctx, func(r *providertest.Recorder) bool {
		cfg := r.Current()["one"]
		return cfg != nil && strings.Contains(cfg.Host, "localhost")
	}))
	require.NoError(t, providertest.Reach(ctx, rec.Current()["one"]))
	events := len(rec.Events())
	one.Data["note"] = []byte("unrelated")
	require.NoError(t, c.Update(ctx, one))

	// Label removed: disengaged. Deleted: disengaged.
	broken.Labels = nil
	require.NoError(t, c.Update(ctx, broken))
	require.NoError(t, rec.WaitNames(ctx, "one"))
	require.NoError(t, c.Delete(ctx, one))
	require.NoError(t, rec.WaitNames(ctx))

	assert.Equal(t, []providertest.Event{
		{Op: "end", Name: "broken", Host: restConfig.Host},
		{Op: "end", Name: "one", Host: strings.Replace(restConfig.Host, "127.0.0.1", "localhost", 1)},
	}, rec.Events()[events:], "the unrelated change engaged nothing")
	assert.Equal(t, []providertest.Event{
		{Op: "engage", Name: "one", Host: restConfig.Host},
		{Op: "engage", Name: "broken", Host: restConfig.Host},
		{Op: "end", Name: "one", Host: restConfig.Host},
		{Op: "engage", Name: "one", Host: strings.Replace(restConfig.Host, "127.0.0.1", "localhost", 1)},
	}, rec.Events()[:events])
	assert.Empty(t, rec.Violations())
	assert.Equal(t, 1, logs.Count("Secret fleet/broken", "the kubeconfig has no contexts"), "logged once, though later syncs saw it: %s", logs.String())
	require.NoError(t, stop())
}

func TestSecretsNameFromLabelAndRunEndsEngagements(t *testing.T) {
	const ns = "named"
	c, ctx := setup(t, ns)
	rec := providertest.NewRecorder()
	var logs providertest.Logs
	p, err := kubeconfig.New(restConfig, kubeconfig.Options{
		Namespace: ns, NameLabel: "fleet.example/cluster", DataKey: "config", Logger: logs.Logger(),
	})
	require.NoError(t, err)
	stop := providertest.Run(p, rec)

	s := secret(ns, "kc-eu-1", map[string]string{kubeconfig.DefaultLabel: "true", "fleet.example/cluster": "eu-1"}, nil)
	s.Data = map[string][]byte{"config": kubeconfigOf(t, "127.0.0.1")}
	require.NoError(t, c.Create(ctx, s))
	nameless := secret(ns, "kc-nameless", selected, nil)
	nameless.Data = map[string][]byte{"config": kubeconfigOf(t, "127.0.0.1")}
	require.NoError(t, c.Create(ctx, nameless))
	wrongKey := secret(ns, "kc-wrong-key", map[string]string{kubeconfig.DefaultLabel: "true", "fleet.example/cluster": "us-1"}, kubeconfigOf(t, "127.0.0.1"))
	require.NoError(t, c.Create(ctx, wrongKey))

	require.NoError(t, rec.WaitNames(ctx, "eu-1"))
	require.NoError(t, logs.Wait(ctx, "Secret named/kc-nameless has no label fleet.example/cluster"))
	require.NoError(t, logs.Wait(ctx, `Secret named/kc-wrong-key has no data key \"config\" (it has [kubeconfig])`))

	require.NoError(t, c.Create(ctx, secret(ns, "later", selected, nil)), "one more sync")
	require.NoError(t, logs.Wait(ctx, "Secret named/later has no label"))
	assert.Equal(t, 1, logs.Count("Secret named/kc-nameless has no label fleet.example/cluster"), "logged once: %s", logs.String())
	require.NoError(t, stop(), "Run returns nil when its context ends")
	require.NoError(t, rec.WaitNames(ctx), "every engagement ended with Run")
}

func TestNewValidates(t *testing.T) {
	_, err := kubeconfig.New(nil, kubeconfig.Options{NameLabel: "a", NameAnnotation: "b"})
	require.Error(t, err)
	for _, want := range []string{"rest.Config is nil", "Options.Namespace is required", "not both"} {
		assert.Contains(t, err.Error(), want)
	}
}

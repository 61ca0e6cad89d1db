package envtest_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/envtest"
)

func TestShardedListAndWatchOnByDefault(t *testing.T) {
	const gate = "--feature-gates=ShardedListAndWatch=true"
	assert.Contains(t, envtest.APIServerArgs(&envtest.Environment{}, 6443), gate)

	set := &envtest.Environment{}
	set.ControlPlane.GetAPIServer().Configure().Set("feature-gates", "X=true")
	args := envtest.APIServerArgs(set, 6443)
	assert.Contains(t, args, "--feature-gates=X=true")
	assert.NotContains(t, args, gate, "Set replaces the default")

	appended := &envtest.Environment{}
	appended.ControlPlane.GetAPIServer().Configure().Append("feature-gates", "X=true")
	args = envtest.APIServerArgs(appended, 6443)
	assert.Contains(t, args, gate, "Append keeps it")
}

package providertest_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/internal/testenv"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func TestRecorderRecordsAndChecksTheContract(t *testing.T) {
	rec := providertest.NewRecorder()
	ctx := t.Context()
	first, cancelFirst := context.WithCancel(ctx)
	defer cancelFirst()
	require.NoError(t, rec.Engage(first, "a", &rest.Config{Host: "https://1"}))
	assert.Empty(t, rec.Violations())

	second, cancelSecond := context.WithCancel(ctx)
	require.NoError(t, rec.Engage(second, "a", &rest.Config{Host: "https://2"}))
	assert.Len(t, rec.Violations(), 1, "engaged again while the first context is live")
	assert.Equal(t, "https://2", rec.Current()["a"].Host)

	cancelSecond()
	require.NoError(t, rec.WaitNames(ctx))
	assert.Equal(t, []providertest.Event{
		{Op: "engage", Name: "a", Host: "https://1"},
		{Op: "end", Name: "a", Host: "https://1"},
		{Op: "engage", Name: "a", Host: "https://2"},
		{Op: "end", Name: "a", Host: "https://2"},
	}, rec.Events())

	assert.ErrorIs(t, rec.Engage(ctx, "", &rest.Config{}), multicluster.ErrInvalidName)
	assert.ErrorContains(t, rec.Engage(ctx, "b", nil), "nil rest.Config")
}

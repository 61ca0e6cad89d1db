package signals

import (
	"context"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{}) }

func TestFirstSignalCancelsSecondExits(t *testing.T) {
	var exits atomic.Int32
	exited := make(chan struct{})
	ctx, stop := handle(context.Background(), func() {
		exits.Add(1)
		close(exited)
	}, syscall.SIGUSR1)
	defer stop()

	require.NoError(t, ctx.Err(), "cancelled before any signal")
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGUSR1))
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("context not cancelled after the first signal")
	}
	assert.Zero(t, exits.Load(), "exit called after the first signal")

	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGUSR1))
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("exit not called after the second signal")
	}
	assert.EqualValues(t, 1, exits.Load())
}

func TestStopWithoutSignal(t *testing.T) {
	ctx, stop := handle(context.Background(), func() { t.Error("exit called") }, syscall.SIGUSR2)
	stop()
	assert.ErrorIs(t, ctx.Err(), context.Canceled, "stop cancels the context")
}

package composite_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/composite"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/providertest"
)

// hangGuard bounds each wait; it is not a latency assertion.
const hangGuard = time.Minute

// static engages names (each at https://<name>) until ctx ends, then
// returns fail (which may be nil); after is called once all are engaged.
func static(fail error, after func(), names ...string) multicluster.Provider {
	return multicluster.ProviderFunc(func(ctx context.Context, s multicluster.Sink) error {
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		for _, n := range names {
			if err := s.Engage(cctx, n, &rest.Config{Host: "https://" + n}); err != nil {
				return err
			}
		}
		if after != nil {
			after()
		}
		if fail != nil {
			return fail
		}
		<-ctx.Done()
		return nil
	})
}

func TestRunPrefixesNames(t *testing.T) {
	rec := providertest.NewRecorder()
	p, err := composite.New(
		composite.Member{Prefix: "a", Provider: static(nil, nil, "x")},
		composite.Member{Prefix: "b", Provider: static(nil, nil, "x", "fleet/y")},
	)
	require.NoError(t, err)
	stop := providertest.Run(p, rec)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	require.NoError(t, rec.WaitNames(ctx, "a/x", "b/x", "b/fleet/y"))
	assert.Equal(t, "https://fleet/y", rec.Current()["b/fleet/y"].Host)
	require.NoError(t, stop(), "Run returns nil when its context ends")
	require.NoError(t, rec.WaitNames(ctx), "the members' engagements ended")
}

func TestRunStopsTheOthersWhenOneFails(t *testing.T) {
	rec := providertest.NewRecorder()
	engaged := make(chan struct{})
	broken := errors.New("cannot list clusters")
	p, err := composite.New(
		composite.Member{Prefix: "ok", Provider: static(nil, func() { close(engaged) }, "x")},
		composite.Member{Prefix: "bad", Provider: multicluster.ProviderFunc(func(ctx context.Context, s multicluster.Sink) error {
			<-engaged
			return static(broken, nil, "y").Run(ctx, s)
		})},
	)
	require.NoError(t, err)
	err = p.Run(t.Context(), rec)
	require.ErrorIs(t, err, broken)
	assert.EqualError(t, err, `composite: provider "bad": cannot list clusters`)
	ctx, cancel := context.WithTimeout(t.Context(), hangGuard)
	defer cancel()
	require.NoError(t, rec.WaitNames(ctx), "the other member was stopped and its clusters ended")
	assert.Contains(t, rec.Events(), providertest.Event{Op: "engage", Name: "bad/y", Host: "https://y"})
}

func TestEngageRejectsInvalidInnerNames(t *testing.T) {
	rec := providertest.NewRecorder()
	p, err := composite.New(composite.Member{Prefix: "a", Provider: static(nil, nil, "")})
	require.NoError(t, err)
	err = p.Run(t.Context(), rec)
	require.ErrorIs(t, err, multicluster.ErrInvalidName)
	assert.Contains(t, err.Error(), `composite: provider "a"`)
	assert.Empty(t, rec.Events(), `"a/" was not engaged`)
}

func TestNewValidates(t *testing.T) {
	p := static(nil, nil)
	tests := []struct {
		name    string
		members []composite.Member
		want    string
	}{
		{name: "none", want: "composite: no members"},
		{name: "empty prefix", members: []composite.Member{{Provider: p}}, want: `member 0 (prefix ""): the prefix is empty`},
		{name: "slash", members: []composite.Member{{Prefix: "a/b", Provider: p}}, want: "the prefix holds a /"},
		{name: "space", members: []composite.Member{{Prefix: "a b", Provider: p}}, want: "holds whitespace"},
		{name: "twice", members: []composite.Member{{Prefix: "a", Provider: p}, {Prefix: "a", Provider: p}}, want: `member 1 (prefix "a"): the prefix is used twice`},
		{name: "nil provider", members: []composite.Member{{Prefix: "a"}}, want: "has no Provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := composite.New(tt.members...)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// Two providers as one: each member's names get its prefix.
func Example() {
	edge := multicluster.ProviderFunc(func(ctx context.Context, s multicluster.Sink) error {
		_ = s.Engage(ctx, "site-7", &rest.Config{Host: "https://site-7.example"})
		<-ctx.Done()
		return nil
	})
	p, err := composite.New(composite.Member{Prefix: "edge", Provider: edge})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engaged := make(chan string, 1)
	done := make(chan error)
	go func() {
		done <- p.Run(ctx, multicluster.SinkFunc(func(_ context.Context, name string, cfg *rest.Config) error {
			engaged <- name + " at " + cfg.Host
			return nil
		}))
	}()
	fmt.Println(<-engaged)
	cancel()
	fmt.Println("Run returned", <-done)
	// Output:
	// edge/site-7 at https://site-7.example
	// Run returned <nil>
}

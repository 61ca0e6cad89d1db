package fence

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kubeloop/kubeloop/internal/lease"
)

type fixed struct {
	left time.Duration
	err  error
}

func (f fixed) Remaining() (time.Duration, error) { return f.left, f.err }

func TestChain(t *testing.T) {
	ctx := context.Background()
	assert.Nil(t, From(ctx))
	assert.Equal(t, ctx, With(ctx, nil))
	two := With(With(ctx, fixed{left: time.Hour}), fixed{left: time.Minute})
	left, err := From(two).Remaining()
	require.NoError(t, err)
	assert.Equal(t, time.Minute, left, "the shortest hold bounds")

	refusing := With(two, fixed{err: errors.New("boom")})
	_, _, err = Write(refusing)
	require.ErrorIs(t, err, lease.ErrLost, "a refusal is a lost lease")
	assert.EqualError(t, err, "fenced: lease lost: boom")

	_, _, err = Write(With(ctx, fixed{}))
	require.ErrorIs(t, err, lease.ErrLost, "no time left is a refusal")
}

func ExampleWrite() {
	ctx := With(context.Background(), fixed{left: time.Minute})
	wctx, done, err := Write(ctx)
	_, bounded := wctx.Deadline()
	fmt.Println(err, bounded, done(nil))
	// Output: <nil> true <nil>
}

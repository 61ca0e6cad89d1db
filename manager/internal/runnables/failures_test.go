package runnables

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/assert"
)

func TestFailures(t *testing.T) {
	f := NewFailures(logr.Discard())
	assert.NoError(t, f.Context().Err())
	assert.NoError(t, f.Result())

	first, second := errors.New("cache: watch failed"), errors.New("controller: boom")
	f.Add(first)
	assert.ErrorIs(t, f.Context().Err(), context.Canceled, "the first error ends the run")
	f.Add(second)
	f.Add(context.Canceled) // before the stop, even a cancellation counts

	f.Stopping()
	f.Add(fmt.Errorf("server: %w", context.Canceled)) // expected while stopping
	late := errors.New("webhook: shutdown failed")
	f.Add(late)

	extra := errors.New("graceful shutdown timed out")
	err := f.Result(extra)
	for _, want := range []error{first, second, context.Canceled, late, extra} {
		assert.ErrorIs(t, err, want)
	}
	assert.Equal(t, "cache: watch failed\ncontroller: boom\ncontext canceled\nwebhook: shutdown failed\ngraceful shutdown timed out", err.Error())
}

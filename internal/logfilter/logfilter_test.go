package logfilter_test

import (
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"

	"github.com/kubeloop/kubeloop/internal/logfilter"
)

func TestWithoutBodies(t *testing.T) {
	var lines []string
	base := funcr.New(func(p, a string) { lines = append(lines, p+" "+a) }, funcr.Options{Verbosity: 10})
	l := logfilter.WithoutBodies(base)
	assert.Equal(t, l, logfilter.WithoutBodies(l), "filtering twice is a no-op")
	l.V(8).Info("Request Body", "body", "password=hunter2")
	l.WithName("cache").WithValues("k", "v").V(8).Info("Response Body", "body", "password=hunter2")
	l.WithCallDepth(1).V(8).Info("Response Body", "body", "password=hunter2")
	l.V(1).Info("kept", "n", 1)
	l.WithName("x").Error(nil, "kept too")
	out := strings.Join(lines, "\n")
	assert.NotContains(t, out, "hunter2")
	assert.Contains(t, out, "kept")
	assert.Contains(t, out, "kept too")
	assert.Equal(t, logr.Logger{}, logfilter.WithoutBodies(logr.Logger{}))
}

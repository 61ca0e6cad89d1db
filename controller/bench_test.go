package controller

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kubeloop/kubeloop/reconcile"
)

// discardSink drops every log line but is enabled, so the per-reconcile
// logger is built as in production.
type discardSink struct{}

func (discardSink) Init(logr.RuntimeInfo)            {}
func (discardSink) Enabled(int) bool                 { return true }
func (discardSink) Info(int, string, ...any)         {}
func (discardSink) Error(error, string, ...any)      {}
func (s discardSink) WithValues(...any) logr.LogSink { return s }
func (s discardSink) WithName(string) logr.LogSink   { return s }

// BenchmarkProcessNextWorkItem measures the controller's overhead per
// reconcile: Get, logger and context, metrics, Forget, Done, with metrics
// registered.
func BenchmarkProcessNextWorkItem(b *testing.B) {
	r := reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) { return reconcile.Result{}, nil })
	c, err := NewUnmanaged("bench", Options{Reconciler: r, Logger: logr.New(discardSink{}), Metrics: prometheus.NewRegistry()})
	if err != nil {
		b.Fatal(err)
	}
	c.queue = c.newQueue()
	defer c.queue.ShutDown()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		c.queue.Add(webReq)
		c.processNextWorkItem(ctx)
	}
}

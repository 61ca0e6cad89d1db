package source_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
	fcache "k8s.io/client-go/tools/cache/testing"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// informers is a cache.Informers for one kind, backed by a real client-go
// shared informer over client-go's fake list-watch source.
type informers struct {
	src      *fcache.FakeControllerSource
	lw       *countingLW
	informer toolscache.SharedIndexInformer
	health   error

	mu   sync.Mutex
	gets int
}

var _ cache.Informers = (*informers)(nil)

func newInformers() *informers {
	src := fcache.NewFakeControllerSource()
	lw := &countingLW{FakeControllerSource: src}
	return &informers{src: src, lw: lw, informer: toolscache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, nil)}
}

// lists returns how many times the informer listed.
func (i *informers) lists() int32 { return i.lw.lists.Load() }

// countingLW counts the lists of a fake list-watch source.
type countingLW struct {
	*fcache.FakeControllerSource
	lists atomic.Int32
}

// List counts and lists.
func (c *countingLW) List(o metav1.ListOptions) (runtime.Object, error) {
	c.lists.Add(1)
	return c.FakeControllerSource.List(o)
}

// run runs the informer until the test ends.
func (i *informers) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		i.informer.RunWithContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		i.src.Shutdown()
	})
}

func (i *informers) GetInformer(context.Context, client.Object) (cache.Informer, error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.gets++
	return i.informer, nil
}

func (i *informers) getCount() int {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.gets
}

func (i *informers) GetInformerForKind(ctx context.Context, _ schema.GroupVersionKind) (cache.Informer, error) {
	return i.GetInformer(ctx, nil)
}

func (i *informers) RemoveInformer(context.Context, client.Object) error { return nil }

func (i *informers) Start(ctx context.Context) error {
	i.informer.RunWithContext(ctx)
	return nil
}

func (i *informers) WaitForCacheSync(ctx context.Context) bool {
	return toolscache.WaitForCacheSync(ctx.Done(), i.informer.HasSynced)
}

func (i *informers) Healthy() error { return i.health }

func (i *informers) IndexField(context.Context, client.Object, string, client.IndexerFunc) error {
	return errors.New("not supported")
}

package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"
)

// multiInformer fans an Informer out over one informer per namespace.
// Handlers see every namespace's events, including isInInitialList.
type multiInformer struct {
	informers []*storeInformer
	done      <-chan struct{} // closed when the informers stop
}

// AddEventHandler adds handler to every namespace's informer.
func (m *multiInformer) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg := &multiRegistration{done: m.done}
	for _, inf := range m.informers {
		r, err := inf.AddEventHandler(handler)
		if err != nil {
			_ = m.RemoveEventHandler(reg)
			return nil, err
		}
		reg.regs = append(reg.regs, r)
	}
	return reg, nil
}

// RemoveEventHandler removes a handler added with AddEventHandler.
func (m *multiInformer) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	reg, ok := handle.(*multiRegistration)
	if !ok {
		return fmt.Errorf("cache: RemoveEventHandler: handle %T was not returned by this informer", handle)
	}
	var errs []error
	for i, r := range reg.regs {
		errs = append(errs, m.informers[i].RemoveEventHandler(r))
	}
	return errors.Join(errs...)
}

// AddIndexers adds indexers to every namespace's informer.
func (m *multiInformer) AddIndexers(indexers toolscache.Indexers) error {
	for _, inf := range m.informers {
		if err := inf.AddIndexers(indexers); err != nil {
			return err
		}
	}
	return nil
}

// HasSynced reports whether every namespace's informer has synced.
func (m *multiInformer) HasSynced() bool {
	for _, inf := range m.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// IsStopped reports whether the informers have stopped.
func (m *multiInformer) IsStopped() bool {
	for _, inf := range m.informers {
		if inf.IsStopped() {
			return true
		}
	}
	return false
}

// multiRegistration is a handler registration over several informers.
type multiRegistration struct {
	regs []toolscache.ResourceEventHandlerRegistration
	done <-chan struct{}

	once   sync.Once
	synced chan struct{}
}

// HasSynced reports whether the handler has seen every namespace's
// initial list.
func (r *multiRegistration) HasSynced() bool {
	for _, reg := range r.regs {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true. The goroutine that watches ends when the informers stop.
func (r *multiRegistration) HasSyncedChecker() toolscache.DoneChecker {
	r.once.Do(func() {
		r.synced = make(chan struct{})
		go func() {
			for _, reg := range r.regs {
				select {
				case <-reg.HasSyncedChecker().Done():
				case <-r.done:
					return
				}
			}
			close(r.synced)
		}()
	})
	return r
}

// Name names the checker.
func (r *multiRegistration) Name() string { return "cache: multi-namespace handler" }

// Done closes when the handler has synced in every namespace.
func (r *multiRegistration) Done() <-chan struct{} { return r.synced }

// trackingLW wraps a list-watch and reports the outcome of every list and
// watch call to the informer's health, and carries the health in each
// call's context so that every HTTP request of the call, client-go's
// silent retries included, reports whether it was answered (see
// listWatchHealth). The reflector retries some failures (connection
// refused) without telling its error handler, so the calls themselves are
// watched.
type trackingLW struct {
	inner     toolscache.ListerWatcher
	health    *listWatchHealth
	streaming bool // the reflector may use a streaming list (InitialListStreaming)
}

func (t *trackingLW) List(opts metav1.ListOptions) (runtime.Object, error) {
	return t.ListWithContext(context.Background(), opts)
}

func (t *trackingLW) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return t.WatchWithContext(context.Background(), opts)
}

func (t *trackingLW) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := toolscache.ToListerWatcherWithContext(t.inner).ListWithContext(withHealth(ctx, t.health), opts)
	t.health.listed(ctx, err)
	return obj, err
}

func (t *trackingLW) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := toolscache.ToListerWatcherWithContext(t.inner).WatchWithContext(withHealth(ctx, t.health), opts)
	t.health.watched(ctx, err)
	return w, err
}

// IsWatchListSemanticsUnSupported tells the reflector not to use a
// streaming list unless the cache asks for one and the wrapped client
// supports it (fake clients do not).
func (t *trackingLW) IsWatchListSemanticsUnSupported() bool {
	return !t.streaming || watchlist.DoesClientNotSupportWatchListSemantics(t.inner)
}

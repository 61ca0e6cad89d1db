package listwatch

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// ShardSource is a kind's server-side shardSelector
// (metav1.ListOptions.ShardSelector), which may change while the informer
// runs. A change ends the informer's watch and makes it list again with
// the new selector; the list's Replace drops the objects outside it.
type ShardSource interface {
	// Shard returns the selector ("" for none), its generation, and a
	// channel closed once a later generation replaces it.
	Shard() (selector string, gen uint64, changed <-chan struct{})
	// Listing is called by list-watch lw before each list, with the
	// generation the list uses.
	Listing(lw any, gen uint64)
	// Listed is called by lw when the result of its list of generation
	// gen has been stored (at the first watch request after that list:
	// the informer replaces its objects before it watches).
	Listed(lw any, gen uint64)
}

// shardState is one list-watch's use of its ShardSource: the generation
// of its last list.
type shardState struct {
	src ShardSource
	mu  sync.Mutex
	gen uint64
	sel string
}

// list records and applies the current generation to the first page of
// a list; later pages keep the first one's selector. The reflector's one
// LIST that reads the server's resourceVersion (Limit 1, no version, no
// continue: reflector.serverRV) stores nothing, so it records nothing.
func (s *shardState) list(opts *metav1.ListOptions) {
	if opts.Continue != "" {
		s.mu.Lock()
		opts.ShardSelector = s.sel
		s.mu.Unlock()
		return
	}
	sel, gen, _ := s.src.Shard()
	opts.ShardSelector = sel
	if opts.Limit == 1 && opts.ResourceVersion == "" {
		return
	}
	s.mu.Lock()
	s.gen, s.sel = gen, sel
	s.mu.Unlock()
	s.src.Listing(s, gen)
}

// watch applies the last list's selector to a watch. It reports the
// channel that ends the watch, or false when the selector changed since
// the list (the watch must not start: the list is stale).
func (s *shardState) watch(opts *metav1.ListOptions) (<-chan struct{}, bool) {
	s.mu.Lock()
	gen, sel := s.gen, s.sel
	s.mu.Unlock()
	s.src.Listed(s, gen)
	_, cur, changed := s.src.Shard()
	if cur != gen {
		return nil, false
	}
	opts.ShardSelector = sel
	return changed, true
}

// relistWatch is a watch that sends one 410 Gone, so that the reflector
// lists again at once (with the new selector).
func relistWatch() watch.Interface {
	ch := make(chan watch.Event, 1)
	st := apierrors.NewResourceExpired("the shard selector changed; list again").ErrStatus
	st.Code = http.StatusGone
	ch <- watch.Event{Type: watch.Error, Object: &st}
	close(ch)
	return &chanWatch{ch: ch}
}

type chanWatch struct{ ch chan watch.Event }

func (w *chanWatch) Stop()                          {}
func (w *chanWatch) ResultChan() <-chan watch.Event { return w.ch }

// shardWatch ends the watch it wraps when the selector changes. It keeps
// the wrapped watch's in-line reading (Next, Drained) when it has one.
type shardWatch struct {
	watch.Interface
	stop func()
}

func (w *shardWatch) Stop() { w.stop(); w.Interface.Stop() }

type inlineWatch interface {
	watch.Interface
	Next() (watch.Event, bool)
	Drained() bool
}

type shardInlineWatch struct {
	inlineWatch
	stop func()
}

func (w *shardInlineWatch) Stop() { w.stop(); w.inlineWatch.Stop() }

// shardedWatch starts a watch through watchFn whose context also ends when
// changed is closed.
func shardedWatch(ctx context.Context, changed <-chan struct{}, opts metav1.ListOptions,
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) (watch.Interface, error) {
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-changed:
			cancel()
		case <-wctx.Done():
		case <-done:
		}
	}()
	var once sync.Once
	stop := func() { once.Do(func() { close(done); cancel() }) }
	w, err := watchFn(wctx, opts)
	if err != nil {
		stop()
		return nil, err
	}
	if in, ok := w.(inlineWatch); ok {
		return &shardInlineWatch{inlineWatch: in, stop: stop}, nil
	}
	return &shardWatch{Interface: w, stop: stop}, nil
}

// shardFilter wraps a list and a watch with r's ShardSource; without one
// it returns them unchanged.
func shardFilter[L runtime.Object](r Request,
	list func(context.Context, metav1.ListOptions) (L, error),
	watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error),
) (func(context.Context, metav1.ListOptions) (L, error), func(context.Context, metav1.ListOptions) (watch.Interface, error)) {
	if r.Shard == nil {
		return list, watchFn
	}
	s := &shardState{src: r.Shard}
	shardList := func(ctx context.Context, opts metav1.ListOptions) (L, error) {
		s.list(&opts)
		return list(ctx, opts)
	}
	shardWatchFn := func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		changed, ok := s.watch(&opts)
		if !ok {
			return relistWatch(), nil
		}
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
			return nil, fmt.Errorf("cache: a kind with a shard selector lists with InitialListPaged")
		}
		return shardedWatch(ctx, changed, opts, watchFn)
	}
	return shardList, shardWatchFn
}

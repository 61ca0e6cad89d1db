package engage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
)

// syncReport is how often Watch logs why its cache has not synced yet.
const syncReport = 15 * time.Second

// Watch runs c until ctx ends and calls resync once the informers of objs
// (created here) have synced, then again after every change any of them
// sees. Changes that arrive while resync runs are coalesced into one more
// call, so resync reads the whole state (the cache's List) every time: the
// level-triggered loop a provider needs, with nothing lost between
// calls. While the cache has not synced, Watch logs c.Healthy()'s reason
// every 15 seconds and keeps waiting. Watch returns nil when ctx ends,
// after c's goroutines have exited, and an error only when an informer
// cannot be created.
func Watch(ctx context.Context, c cache.Cache, log logr.Logger, objs []client.Object, resync func(context.Context)) error {
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	for _, obj := range objs {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Start(runCtx) })
	defer wg.Wait()
	defer cancel()

	for {
		wctx, wcancel := context.WithTimeout(ctx, syncReport)
		ok := c.WaitForCacheSync(wctx)
		wcancel()
		if ok {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		err := c.Healthy()
		if err == nil {
			err = errors.New("no list has completed yet")
		}
		log.Error(err, "waiting for the provider's cache to sync")
	}
	for {
		// Drop the signals of the initial list: this sync reads it all.
		select {
		case <-changed:
		default:
		}
		resync(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
	}
}

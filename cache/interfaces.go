package cache

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/kubeloop/kubeloop/client"
)

// Cache is a read-only, eventually consistent view of the cluster built from
// List-Watch informers, one per kind. It serves client.Reader calls from
// memory, hands out the cached objects themselves to client.GetShared, and
// hands out informers for event handlers.
type Cache interface {
	client.SharedReader
	Informers
}

// Informers starts, hands out and removes the informers behind a Cache.
type Informers interface {
	// GetInformer returns the informer for obj's kind, creating it (and
	// starting it, when the cache has started) if needed.
	GetInformer(ctx context.Context, obj client.Object) (Informer, error)
	// GetInformerForKind is GetInformer by kind.
	GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind) (Informer, error)
	// RemoveInformer stops the informer for obj's kind and frees its memory.
	RemoveInformer(ctx context.Context, obj client.Object) error
	// Start runs every informer, those added later too, until ctx ends.
	// It blocks and returns after every goroutine it started has exited.
	Start(ctx context.Context) error
	// WaitForCacheSync waits until every informer started so far has
	// synced, and reports whether they did before ctx ended.
	WaitForCacheSync(ctx context.Context) bool
	// Healthy returns nil when every informer's list-watch works, else an
	// error naming each failing kind and its cause: a failed list or watch
	// (for example RBAC forbidden), or three requests in a row that got no
	// answer (connections closed or reset). The manager's readiness check
	// uses it.
	Healthy() error

	client.FieldIndexer
}

// Informer is the part of client-go's SharedIndexInformer that controllers
// use.
type Informer interface {
	// AddEventHandler adds a handler. It is called for every object in the
	// store first (with isInInitialList true), then for every change. It is
	// called in line, on the goroutine that reads the watch and applies
	// changes to the store, so it must not block: enqueue work, do not
	// perform it. A blocked handler stops the watch being read.
	AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error)
	// RemoveEventHandler removes a handler added with AddEventHandler.
	RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error
	// AddIndexers adds indexes to the store.
	AddIndexers(indexers toolscache.Indexers) error
	// HasSynced reports whether the initial list has been delivered to the
	// store.
	HasSynced() bool
	// IsStopped reports whether the informer has stopped.
	IsStopped() bool
}

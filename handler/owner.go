package handler

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
	"github.com/kubeloop/kubeloop/reconcile"
)

// OwnerOption configures EnqueueRequestForOwner.
type OwnerOption func(*ownerHandler)

// OnlyControllerOwner enqueues only the owner whose ownerReference has
// controller: true. It is the default; the option exists so that code
// written for controller-runtime compiles unchanged.
func OnlyControllerOwner() OwnerOption {
	return func(h *ownerHandler) { h.allOwners = false }
}

// AllOwners enqueues every owner of the owner type, not only the
// controller owner.
func AllOwners() OwnerOption {
	return func(h *ownerHandler) { h.allOwners = true }
}

// EnqueueRequestForOwner returns a handler that enqueues the owner of the
// event's object: the object named by its ownerReference to an object of
// ownerType's kind (matched by API group and kind, any version). By default
// only the controller owner (controller: true) is enqueued; AllOwners
// enqueues every owner of the kind. The owner's namespace is the object's
// when mapper says the owner kind is namespaced, else empty.
//
// scheme resolves ownerType's kind; EnqueueRequestForOwner panics if it
// cannot, as the program is then wrong (controller/builder checks first and
// returns an error instead). mapper is consulted on the first event only.
func EnqueueRequestForOwner(scheme *runtime.Scheme, mapper meta.RESTMapper, ownerType client.Object, opts ...OwnerOption) EventHandler {
	return TypedEnqueueRequestForOwner[client.Object](scheme, mapper, ownerType, opts...)
}

// TypedEnqueueRequestForOwner is EnqueueRequestForOwner for events of a
// concrete object type, as in controller-runtime:
// handler.TypedEnqueueRequestForOwner[*appsv1.ReplicaSet](scheme, mapper, &appsv1.Deployment{}).
func TypedEnqueueRequestForOwner[object client.Object](scheme *runtime.Scheme, mapper meta.RESTMapper, ownerType client.Object, opts ...OwnerOption) TypedEventHandler[object, reconcile.Request] {
	gvk, err := apiutil.GVKForObject(ownerType, scheme)
	if err != nil {
		panic(fmt.Sprintf("handler: EnqueueRequestForOwner: %v", err))
	}
	h := &ownerHandler{groupKind: gvk.GroupKind(), version: gvk.Version, mapper: mapper}
	for _, opt := range opts {
		opt(h)
	}
	return typedOwnerHandler[object]{h}
}

// Scope of the owner kind, resolved once through the RESTMapper.
const (
	scopeUnknown int32 = iota
	scopeNamespaced
	scopeCluster
)

// ownerHandler finds the owners of an object; typedOwnerHandler hands it
// the objects of events.
type ownerHandler struct {
	groupKind schema.GroupKind
	version   string
	allOwners bool
	mapper    meta.RESTMapper
	scope     atomic.Int32
}

type typedOwnerHandler[object client.Object] struct{ *ownerHandler }

var _ EventHandler = typedOwnerHandler[client.Object]{}

func (h typedOwnerHandler[T]) Create(ctx context.Context, evt TypedCreateEvent[T], q Queue) {
	if isNil(evt.Object) {
		return
	}
	add(q, lowCreate(evt), h.owners(ctx, evt.Object, nil)...)
}

func (h typedOwnerHandler[T]) Update(ctx context.Context, evt TypedUpdateEvent[T], q Queue) {
	var reqs []reconcile.Request
	if !isNil(evt.ObjectOld) {
		reqs = h.owners(ctx, evt.ObjectOld, nil)
	}
	if !isNil(evt.ObjectNew) {
		reqs = h.owners(ctx, evt.ObjectNew, reqs)
	}
	add(q, lowUpdate(evt), reqs...)
}

func (h typedOwnerHandler[T]) Delete(ctx context.Context, evt TypedDeleteEvent[T], q Queue) {
	if isNil(evt.Object) {
		return
	}
	add(q, lowDelete(evt), h.owners(ctx, evt.Object, nil)...)
}

func (h typedOwnerHandler[T]) Generic(ctx context.Context, evt TypedGenericEvent[T], q Queue) {
	if isNil(evt.Object) {
		return
	}
	add(q, false, h.owners(ctx, evt.Object, nil)...)
}

// owners appends to reqs the owners of obj (not nil) that are not in reqs
// yet.
func (h *ownerHandler) owners(ctx context.Context, obj client.Object, reqs []reconcile.Request) []reconcile.Request {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return reqs
	}
	namespace := ""
	resolved := false
next:
	for i := range refs {
		ref := &refs[i]
		if !h.allOwners && (ref.Controller == nil || !*ref.Controller) {
			continue
		}
		if ref.Kind != h.groupKind.Kind || apiGroup(ref.APIVersion) != h.groupKind.Group {
			continue
		}
		if !resolved {
			namespaced, err := h.namespaced()
			if err != nil {
				logr.FromContextOrDiscard(ctx).Error(err, "cannot map owner reference to a request",
					"ownerKind", h.groupKind.String(), "namespace", obj.GetNamespace(), "name", obj.GetName())
				return reqs
			}
			if namespaced {
				namespace = obj.GetNamespace()
			}
			resolved = true
		}
		req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: ref.Name}}
		for _, r := range reqs {
			if r == req {
				continue next
			}
		}
		reqs = append(reqs, req)
	}
	return reqs
}

// namespaced reports whether the owner kind is namespaced, asking the
// RESTMapper until it answers once.
func (h *ownerHandler) namespaced() (bool, error) {
	switch h.scope.Load() {
	case scopeNamespaced:
		return true, nil
	case scopeCluster:
		return false, nil
	}
	if h.mapper == nil {
		return false, fmt.Errorf("handler: no RESTMapper to find the scope of %s", h.groupKind)
	}
	mapping, err := h.mapper.RESTMapping(h.groupKind, h.version)
	if err != nil {
		return false, fmt.Errorf("handler: find the scope of %s: %w", h.groupKind, err)
	}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		h.scope.Store(scopeNamespaced)
		return true, nil
	}
	h.scope.Store(scopeCluster)
	return false, nil
}

// apiGroup returns the group of an apiVersion ("apps/v1" -> "apps",
// "v1" -> "") without allocating.
func apiGroup(apiVersion string) string {
	for i := len(apiVersion) - 1; i >= 0; i-- {
		if apiVersion[i] == '/' {
			return apiVersion[:i]
		}
	}
	return ""
}

// Package mirror is the ConfigMap mirror operator: a ConfigMap labelled
// mirror.kubeloop.dev/source=true is copied into every namespace labelled
// mirror.kubeloop.dev/accept=true, and the copies follow it: changed when it
// changes, restored when tampered with or deleted, removed when it is
// deleted, loses its label, or a namespace stops accepting.
//
// It shows a controller driven by a map function (namespace events fan out
// to every source) and an index (copies are found by the source they
// mirror, in one lookup).
package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/handler"
	"github.com/kubeloop/kubeloop/handler/predicate"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

// Labels of the mirror protocol.
const (
	// SourceLabel marks a ConfigMap to mirror.
	SourceLabel = "mirror.kubeloop.dev/source"
	// AcceptLabel marks a namespace that receives copies.
	AcceptLabel = "mirror.kubeloop.dev/accept"
	// MirrorOfLabel on a copy names its source as "namespace.name".
	MirrorOfLabel = "mirror.kubeloop.dev/mirror-of"
	// MirrorOfIndex indexes ConfigMaps by MirrorOfLabel.
	MirrorOfIndex = "mirrorOf"
)

// Reconciler keeps the copies of one source ConfigMap in line with it.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager registers the index and the controller with mgr.
func SetupWithManager(ctx context.Context, mgr *manager.Manager) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.ConfigMap{}, MirrorOfIndex, func(obj client.Object) []string {
		if v := obj.GetLabels()[MirrorOfLabel]; v != "" {
			return []string{v}
		}
		return nil
	}); err != nil {
		return err
	}
	r := &Reconciler{Client: mgr.GetClient()}
	return builder.ControllerManagedBy(mgr).
		Named("configmap-mirror").
		// Sources, including the update that removes their label.
		For(&corev1.ConfigMap{}, builder.WithPredicates(predicate.Funcs{
			CreateFunc:  func(e handler.CreateEvent) bool { return isSource(e.Object) },
			UpdateFunc:  func(e handler.UpdateEvent) bool { return isSource(e.ObjectOld) || isSource(e.ObjectNew) },
			DeleteFunc:  func(e handler.DeleteEvent) bool { return isSource(e.Object) },
			GenericFunc: func(e handler.GenericEvent) bool { return isSource(e.Object) },
		})).
		// Copies: any change to a copy reconciles its source.
		Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(sourceOfCopy)).
		// Namespaces: a namespace that starts or stops accepting
		// reconciles every source.
		Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.allSources)).
		Complete(r)
}

func isSource(obj client.Object) bool { return obj.GetLabels()[SourceLabel] == "true" }

// sourceOfCopy maps a copy to its source.
func sourceOfCopy(_ context.Context, obj client.Object) []reconcile.Request {
	ns, name, ok := strings.Cut(obj.GetLabels()[MirrorOfLabel], ".")
	if !ok {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}}
}

// allSources maps a namespace event to every source ConfigMap.
func (r *Reconciler) allSources(ctx context.Context, _ client.Object) []reconcile.Request {
	var sources corev1.ConfigMapList
	if err := r.Client.List(ctx, &sources, client.MatchingLabels{SourceLabel: "true"}); err != nil {
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(sources.Items))
	for i := range sources.Items {
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&sources.Items[i])})
	}
	return reqs
}

// Reconcile makes the set of copies of req's ConfigMap match the accepting
// namespaces.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	mirrorOf := req.Namespace + "." + req.Name
	var copies corev1.ConfigMapList
	if err := r.Client.List(ctx, &copies, client.MatchingFields{MirrorOfIndex: mirrorOf}); err != nil {
		return reconcile.Result{}, fmt.Errorf("list copies: %w", err)
	}

	var src corev1.ConfigMap
	err := r.Client.Get(ctx, req.NamespacedName, &src)
	if err != nil && !apierrors.IsNotFound(err) {
		return reconcile.Result{}, err
	}
	want := map[string]bool{}
	if err == nil && isSource(&src) && src.DeletionTimestamp.IsZero() {
		var namespaces corev1.NamespaceList
		if err := r.Client.List(ctx, &namespaces, client.MatchingLabels{AcceptLabel: "true"}); err != nil {
			return reconcile.Result{}, fmt.Errorf("list namespaces: %w", err)
		}
		for _, ns := range namespaces.Items {
			if ns.Name != src.Namespace && ns.DeletionTimestamp.IsZero() {
				want[ns.Name] = true
			}
		}
	}

	var errs []error
	for i := range copies.Items {
		cp := &copies.Items[i]
		if !want[cp.Namespace] {
			if err := r.Client.Delete(ctx, cp); client.IgnoreNotFound(err) != nil {
				errs = append(errs, fmt.Errorf("delete copy %s/%s: %w", cp.Namespace, cp.Name, err))
			}
			continue
		}
		delete(want, cp.Namespace)
		if maps.Equal(cp.Data, src.Data) && maps.EqualFunc(cp.BinaryData, src.BinaryData, bytes.Equal) {
			continue
		}
		cp.Data, cp.BinaryData = src.Data, src.BinaryData
		if err := r.Client.Update(ctx, cp); err != nil {
			errs = append(errs, fmt.Errorf("update copy %s/%s: %w", cp.Namespace, cp.Name, err))
		}
	}
	for ns := range want {
		cp := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: src.Name, Labels: map[string]string{MirrorOfLabel: mirrorOf}},
			Data:       src.Data, BinaryData: src.BinaryData,
		}
		if err := r.Client.Create(ctx, cp); err != nil {
			errs = append(errs, fmt.Errorf("create copy in %s: %w", ns, err))
		}
	}
	return reconcile.Result{}, errors.Join(errs...)
}

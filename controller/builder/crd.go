package builder

import (
	"github.com/kubeloop/kubeloop/controller/source"
)

// WaitForCRD lets the controller start while the kind of a For, Owns or
// Watches is not served (its CustomResourceDefinition is not installed, or
// not yet established), and follows the CRD as it comes and goes, with
// source.WaitForCRD:
//
//   - Complete/Build does not fail for that kind, and the manager starts;
//     the kind's informer starts once the kind is served, and its objects
//     are then reconciled (For) or mapped (Owns, Watches) as usual.
//   - When the CRD is deleted, the informer is removed from the cache, with
//     nothing logged at ERROR, and the source waits for the CRD to return.
//   - For a For kind, the controller's Requests are all of that kind: while
//     it is not served the controller drops every Request it takes from its
//     queue (and every retry of a reconcile that failed meanwhile), instead
//     of failing on each. For an Owns or Watches kind nothing is dropped:
//     its Requests name objects of the For kind, which still exists.
//   - The controller's WaitingKinds, the manager's "crd-sources" readiness
//     check (which passes) and the kubeloop_source_waiting{controller,kind}
//     gauge name the kinds that wait.
//
// Without it, a kind that is not served fails Complete/Build with an error
// naming it, as before.
var WaitForCRD Option = optionFunc(func(o *options) { o.waitForCRD = true })

// kindSource returns the source of one For, Owns or Watches call: k, or
// with WaitForCRD a source that waits for k's CRD. reconciled is true for
// For.
func (b *TypedBuilder[request]) kindSource(in watchInput, k *source.KindSource, reconciled bool) source.Source {
	if !in.waitForCRD {
		return k
	}
	return source.WaitForCRD(k, b.mgr.GetRESTMapper(), source.CRDOptions{Scheme: b.mgr.GetScheme(), Reconciled: reconciled})
}

package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/client/internal/live"
)

// InNamespace restricts a List or DeleteAllOf to one namespace. An empty
// InNamespace means all namespaces.
type InNamespace string

// ApplyToList sets the namespace.
func (n InNamespace) ApplyToList(o *ListOptions) { o.Namespace = string(n) }

// ApplyToDeleteAllOf sets the namespace.
func (n InNamespace) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { n.ApplyToList(&o.ListOptions) }

// MatchingLabels selects objects whose labels include every pair.
type MatchingLabels map[string]string

// ApplyToList sets the label selector. A key or value that is not a valid
// label key or value (such as "x,tier!=prod", which would otherwise add a
// requirement) yields a selector that the List rejects with an error
// naming it.
func (m MatchingLabels) ApplyToList(o *ListOptions) {
	sel, err := labels.ValidatedSelectorFromSet(map[string]string(m))
	if err != nil {
		o.LabelSelector = live.InvalidSelector(err)
		return
	}
	o.LabelSelector = sel
}

// ApplyToDeleteAllOf sets the label selector.
func (m MatchingLabels) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { m.ApplyToList(&o.ListOptions) }

// HasLabels selects objects that have every label key, whatever its value.
type HasLabels []string

// ApplyToList sets the label selector. A key that is not a valid label key
// yields a selector that the List rejects with an error naming the key.
func (h HasLabels) ApplyToList(o *ListOptions) {
	sel := labels.NewSelector()
	for _, key := range h {
		r, err := labels.NewRequirement(key, selection.Exists, nil)
		if err != nil {
			o.LabelSelector = live.InvalidSelector(err)
			return
		}
		sel = sel.Add(*r)
	}
	o.LabelSelector = sel
}

// ApplyToDeleteAllOf sets the label selector.
func (h HasLabels) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { h.ApplyToList(&o.ListOptions) }

// MatchingLabelsSelector selects objects with a labels.Selector.
type MatchingLabelsSelector struct{ labels.Selector }

// ApplyToList sets the label selector.
func (m MatchingLabelsSelector) ApplyToList(o *ListOptions) { o.LabelSelector = m.Selector }

// ApplyToDeleteAllOf sets the label selector.
func (m MatchingLabelsSelector) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	m.ApplyToList(&o.ListOptions)
}

// MatchingFields selects objects whose fields equal every value. A cached
// List answers it from the indexes added with IndexField.
type MatchingFields fields.Set

// ApplyToList sets the field selector.
func (m MatchingFields) ApplyToList(o *ListOptions) {
	o.FieldSelector = fields.SelectorFromSet(fields.Set(m))
}

// ApplyToDeleteAllOf sets the field selector.
func (m MatchingFields) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { m.ApplyToList(&o.ListOptions) }

// MatchingFieldsSelector selects objects with a fields.Selector.
type MatchingFieldsSelector struct{ fields.Selector }

// ApplyToList sets the field selector.
func (m MatchingFieldsSelector) ApplyToList(o *ListOptions) { o.FieldSelector = m.Selector }

// ApplyToDeleteAllOf sets the field selector.
func (m MatchingFieldsSelector) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	m.ApplyToList(&o.ListOptions)
}

// Limit caps the number of items of a List page.
type Limit int64

// ApplyToList sets the limit.
func (l Limit) ApplyToList(o *ListOptions) { o.Limit = int64(l) }

// Continue asks for the page after the one that returned this token.
type Continue string

// ApplyToList sets the continue token.
func (c Continue) ApplyToList(o *ListOptions) { o.Continue = string(c) }

// UnsafeDisableDeepCopy makes a cached Get or List share memory with the
// cache instead of copying. The objects read must not be mutated.
var UnsafeDisableDeepCopy = unsafeDisableDeepCopy(true)

type unsafeDisableDeepCopy bool

func (u unsafeDisableDeepCopy) ApplyToGet(o *GetOptions) { b := bool(u); o.UnsafeDisableDeepCopy = &b }
func (u unsafeDisableDeepCopy) ApplyToList(o *ListOptions) {
	b := bool(u)
	o.UnsafeDisableDeepCopy = &b
}

// DeleteEverything lets a DeleteAllOf without a namespace and without a
// selector delete every object of the kind in the cluster, which it
// otherwise refuses with ErrDeleteEverything:
//
//	err := c.DeleteAllOf(ctx, &examplev1.Scratch{}, client.DeleteEverything)
var DeleteEverything = deleteEverything{}

type deleteEverything struct{}

// ApplyToDeleteAllOf sets Everything.
func (deleteEverything) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { o.Everything = true }

// DryRunAll validates a write on the server without persisting it.
var DryRunAll = dryRunAll{}

type dryRunAll struct{}

var dryRunAllValue = []string{metav1.DryRunAll}

func (dryRunAll) ApplyToCreate(o *CreateOptions)                       { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToUpdate(o *UpdateOptions)                       { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToPatch(o *PatchOptions)                         { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToApply(o *ApplyOptions)                         { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToDelete(o *DeleteOptions)                       { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToDeleteAllOf(o *DeleteAllOfOptions)             { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToSubResourceCreate(o *SubResourceCreateOptions) { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToSubResourcePatch(o *SubResourcePatchOptions)   { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToSubResourceApply(o *SubResourceApplyOptions)   { o.DryRun = dryRunAllValue }

// FieldOwner names the writer in managedFields.
type FieldOwner string

// ApplyToCreate sets the field manager of a Create.
func (f FieldOwner) ApplyToCreate(o *CreateOptions) { o.FieldManager = string(f) }

// ApplyToUpdate sets the field manager of an Update.
func (f FieldOwner) ApplyToUpdate(o *UpdateOptions) { o.FieldManager = string(f) }

// ApplyToPatch sets the field manager of a Patch.
func (f FieldOwner) ApplyToPatch(o *PatchOptions) { o.FieldManager = string(f) }

// ApplyToApply sets the field manager of an Apply.
func (f FieldOwner) ApplyToApply(o *ApplyOptions) { o.FieldManager = string(f) }

// ApplyToSubResourceCreate sets the field manager of a subresource Create.
func (f FieldOwner) ApplyToSubResourceCreate(o *SubResourceCreateOptions) { o.FieldManager = string(f) }

// ApplyToSubResourceUpdate sets the field manager of a subresource Update.
func (f FieldOwner) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) { o.FieldManager = string(f) }

// ApplyToSubResourcePatch sets the field manager of a subresource Patch.
func (f FieldOwner) ApplyToSubResourcePatch(o *SubResourcePatchOptions) { o.FieldManager = string(f) }

// ApplyToSubResourceApply sets the field manager of a subresource Apply.
func (f FieldOwner) ApplyToSubResourceApply(o *SubResourceApplyOptions) { o.FieldManager = string(f) }

// FieldValidation sets how the server treats unknown or duplicate fields:
// "Ignore", "Warn" or "Strict".
type FieldValidation string

// ApplyToCreate sets the field validation of a Create.
func (f FieldValidation) ApplyToCreate(o *CreateOptions) { o.FieldValidation = string(f) }

// ApplyToUpdate sets the field validation of an Update.
func (f FieldValidation) ApplyToUpdate(o *UpdateOptions) { o.FieldValidation = string(f) }

// ApplyToPatch sets the field validation of a Patch.
func (f FieldValidation) ApplyToPatch(o *PatchOptions) { o.FieldValidation = string(f) }

// ApplyToSubResourceCreate sets the field validation of a subresource Create.
func (f FieldValidation) ApplyToSubResourceCreate(o *SubResourceCreateOptions) {
	o.FieldValidation = string(f)
}

// ApplyToSubResourceUpdate sets the field validation of a subresource Update.
func (f FieldValidation) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) {
	o.FieldValidation = string(f)
}

// ApplyToSubResourcePatch sets the field validation of a subresource Patch.
func (f FieldValidation) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	o.FieldValidation = string(f)
}

// ForceOwnership takes ownership of fields another manager owns in a
// server-side apply.
var ForceOwnership = forceOwnership{}

type forceOwnership struct{}

func (forceOwnership) ApplyToPatch(o *PatchOptions)                       { o.Force = ptr.To(true) }
func (forceOwnership) ApplyToApply(o *ApplyOptions)                       { o.Force = ptr.To(true) }
func (forceOwnership) ApplyToSubResourcePatch(o *SubResourcePatchOptions) { o.Force = ptr.To(true) }
func (forceOwnership) ApplyToSubResourceApply(o *SubResourceApplyOptions) { o.Force = ptr.To(true) }

// GracePeriodSeconds overrides the grace period of a delete.
type GracePeriodSeconds int64

// ApplyToDelete sets the grace period of a Delete.
func (g GracePeriodSeconds) ApplyToDelete(o *DeleteOptions) { s := int64(g); o.GracePeriodSeconds = &s }

// ApplyToDeleteAllOf sets the grace period of a DeleteAllOf.
func (g GracePeriodSeconds) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	g.ApplyToDelete(&o.DeleteOptions)
}

// PropagationPolicy chooses how dependents of a deleted object are deleted.
type PropagationPolicy metav1.DeletionPropagation

// ApplyToDelete sets the propagation policy of a Delete.
func (p PropagationPolicy) ApplyToDelete(o *DeleteOptions) {
	v := metav1.DeletionPropagation(p)
	o.PropagationPolicy = &v
}

// ApplyToDeleteAllOf sets the propagation policy of a DeleteAllOf.
func (p PropagationPolicy) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	p.ApplyToDelete(&o.DeleteOptions)
}

// Preconditions must hold for a delete to run.
type Preconditions metav1.Preconditions

// ApplyToDelete sets the preconditions of a Delete.
func (p Preconditions) ApplyToDelete(o *DeleteOptions) {
	v := metav1.Preconditions(p)
	o.Preconditions = &v
}

// ApplyToDeleteAllOf sets the preconditions of a DeleteAllOf.
func (p Preconditions) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { p.ApplyToDelete(&o.DeleteOptions) }

// WithSubResourceBody sends body instead of the object in a subresource
// update or patch (for example a Scale for the scale subresource).
func WithSubResourceBody(body Object) SubResourceBody { return SubResourceBody{Body: body} }

// SubResourceBody is the option WithSubResourceBody returns.
type SubResourceBody struct{ Body Object }

// ApplyToSubResourceUpdate sets the body of a subresource Update.
func (s SubResourceBody) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) {
	o.SubResourceBody = s.Body
}

// ApplyToSubResourcePatch sets the body of a subresource Patch.
func (s SubResourceBody) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	o.SubResourceBody = s.Body
}

package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// Option interfaces: each verb takes options that implement its interface.
// An option value (InNamespace, FieldOwner, ...) implements every interface
// of the verbs it applies to.
type (
	// GetOption modifies a Get.
	GetOption interface{ ApplyToGet(*GetOptions) }
	// ListOption modifies a List.
	ListOption interface{ ApplyToList(*ListOptions) }
	// CreateOption modifies a Create.
	CreateOption interface{ ApplyToCreate(*CreateOptions) }
	// UpdateOption modifies an Update.
	UpdateOption interface{ ApplyToUpdate(*UpdateOptions) }
	// PatchOption modifies a Patch.
	PatchOption interface{ ApplyToPatch(*PatchOptions) }
	// ApplyOption modifies an Apply.
	ApplyOption interface{ ApplyToApply(*ApplyOptions) }
	// DeleteOption modifies a Delete.
	DeleteOption interface{ ApplyToDelete(*DeleteOptions) }
	// DeleteAllOfOption modifies a DeleteAllOf.
	DeleteAllOfOption interface{ ApplyToDeleteAllOf(*DeleteAllOfOptions) }
	// SubResourceGetOption modifies a subresource Get.
	SubResourceGetOption interface{ ApplyToSubResourceGet(*SubResourceGetOptions) }
	// SubResourceCreateOption modifies a subresource Create.
	SubResourceCreateOption interface {
		ApplyToSubResourceCreate(*SubResourceCreateOptions)
	}
	// SubResourceUpdateOption modifies a subresource Update.
	SubResourceUpdateOption interface {
		ApplyToSubResourceUpdate(*SubResourceUpdateOptions)
	}
	// SubResourcePatchOption modifies a subresource Patch.
	SubResourcePatchOption interface {
		ApplyToSubResourcePatch(*SubResourcePatchOptions)
	}
)

// GetOptions are the options of a Get. The zero value reads a deep copy.
type GetOptions struct {
	// UnsafeDisableDeepCopy, when true, lets a cache read fill obj with the
	// cached object's fields without copying them. The result shares
	// memory with the cache and must not be mutated. Nil means false.
	UnsafeDisableDeepCopy *bool
	// Raw is passed to the API server as is; nil means none.
	Raw *metav1.GetOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *GetOptions) ApplyOptions(opts []GetOption) *GetOptions {
	for _, opt := range opts {
		opt.ApplyToGet(o)
	}
	return o
}

// ApplyToGet copies o's set fields into g, so a GetOptions is itself an
// option.
func (o *GetOptions) ApplyToGet(g *GetOptions) {
	if o.UnsafeDisableDeepCopy != nil {
		g.UnsafeDisableDeepCopy = o.UnsafeDisableDeepCopy
	}
	if o.Raw != nil {
		g.Raw = o.Raw
	}
}

// ListOptions are the options of a List and of the list half of DeleteAllOf.
// The zero value lists every object of the kind in every namespace.
type ListOptions struct {
	// LabelSelector filters by labels; nil means everything.
	LabelSelector labels.Selector
	// FieldSelector filters by fields; nil means everything. A cache
	// answers only exact matches on indexed fields.
	FieldSelector fields.Selector
	// Namespace restricts the list to one namespace; empty means all.
	Namespace string
	// Limit caps the number of items the server returns; 0 means no cap.
	Limit int64
	// Continue is the continue token of the previous page.
	Continue string
	// UnsafeDisableDeepCopy, when true, lets a cache read return the cached
	// objects without copying them. They must not be mutated. Nil means false.
	UnsafeDisableDeepCopy *bool
	// Raw is used as the base of the request's options; nil means none.
	Raw *metav1.ListOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *ListOptions) ApplyOptions(opts []ListOption) *ListOptions {
	for _, opt := range opts {
		opt.ApplyToList(o)
	}
	return o
}

// ApplyToList copies o's set fields into lo, so a ListOptions is itself an
// option.
func (o *ListOptions) ApplyToList(lo *ListOptions) {
	if o.LabelSelector != nil {
		lo.LabelSelector = o.LabelSelector
	}
	if o.FieldSelector != nil {
		lo.FieldSelector = o.FieldSelector
	}
	if o.Namespace != "" {
		lo.Namespace = o.Namespace
	}
	if o.Limit > 0 {
		lo.Limit = o.Limit
	}
	if o.Continue != "" {
		lo.Continue = o.Continue
	}
	if o.UnsafeDisableDeepCopy != nil {
		lo.UnsafeDisableDeepCopy = o.UnsafeDisableDeepCopy
	}
	if o.Raw != nil {
		lo.Raw = o.Raw
	}
}

// AsListOptions returns the API server's form of o.
func (o *ListOptions) AsListOptions() *metav1.ListOptions {
	out := &metav1.ListOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	if o.LabelSelector != nil {
		out.LabelSelector = o.LabelSelector.String()
	}
	if o.FieldSelector != nil {
		out.FieldSelector = o.FieldSelector.String()
	}
	if o.Limit > 0 {
		out.Limit = o.Limit
	}
	if o.Continue != "" {
		out.Continue = o.Continue
	}
	return out
}

// CreateOptions are the options of a Create.
type CreateOptions struct {
	// DryRun set to []string{metav1.DryRunAll} validates without saving.
	DryRun []string
	// FieldManager names the writer in managedFields; empty means the
	// client's default.
	FieldManager string
	// FieldValidation is "Ignore", "Warn" or "Strict"; empty means the
	// server's default (Warn).
	FieldValidation string
	// Raw is used as the base of the request's options; nil means none.
	Raw *metav1.CreateOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *CreateOptions) ApplyOptions(opts []CreateOption) *CreateOptions {
	for _, opt := range opts {
		opt.ApplyToCreate(o)
	}
	return o
}

// AsCreateOptions returns the API server's form of o.
func (o *CreateOptions) AsCreateOptions() *metav1.CreateOptions {
	out := &metav1.CreateOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	out.DryRun = orStrings(o.DryRun, out.DryRun)
	out.FieldManager = orString(o.FieldManager, out.FieldManager)
	out.FieldValidation = orString(o.FieldValidation, out.FieldValidation)
	return out
}

// UpdateOptions are the options of an Update.
type UpdateOptions struct {
	// DryRun set to []string{metav1.DryRunAll} validates without saving.
	DryRun []string
	// FieldManager names the writer in managedFields; empty means default.
	FieldManager string
	// FieldValidation is "Ignore", "Warn" or "Strict"; empty means Warn.
	FieldValidation string
	// Raw is used as the base of the request's options; nil means none.
	Raw *metav1.UpdateOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *UpdateOptions) ApplyOptions(opts []UpdateOption) *UpdateOptions {
	for _, opt := range opts {
		opt.ApplyToUpdate(o)
	}
	return o
}

// AsUpdateOptions returns the API server's form of o.
func (o *UpdateOptions) AsUpdateOptions() *metav1.UpdateOptions {
	out := &metav1.UpdateOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	out.DryRun = orStrings(o.DryRun, out.DryRun)
	out.FieldManager = orString(o.FieldManager, out.FieldManager)
	out.FieldValidation = orString(o.FieldValidation, out.FieldValidation)
	return out
}

// PatchOptions are the options of a Patch.
type PatchOptions struct {
	// DryRun set to []string{metav1.DryRunAll} validates without saving.
	DryRun []string
	// Force takes ownership of conflicting fields in an apply patch; nil
	// means false. Only valid for apply patches.
	Force *bool
	// FieldManager names the writer in managedFields; required for apply
	// patches, empty otherwise means default.
	FieldManager string
	// FieldValidation is "Ignore", "Warn" or "Strict"; empty means Warn.
	FieldValidation string
	// Raw is used as the base of the request's options; nil means none.
	Raw *metav1.PatchOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *PatchOptions) ApplyOptions(opts []PatchOption) *PatchOptions {
	for _, opt := range opts {
		opt.ApplyToPatch(o)
	}
	return o
}

// AsPatchOptions returns the API server's form of o.
func (o *PatchOptions) AsPatchOptions() *metav1.PatchOptions {
	out := &metav1.PatchOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	out.DryRun = orStrings(o.DryRun, out.DryRun)
	if o.Force != nil {
		out.Force = o.Force
	}
	out.FieldManager = orString(o.FieldManager, out.FieldManager)
	out.FieldValidation = orString(o.FieldValidation, out.FieldValidation)
	return out
}

// ApplyOptions are the options of a server-side Apply.
type ApplyOptions struct {
	// DryRun set to []string{metav1.DryRunAll} validates without saving.
	DryRun []string
	// Force takes ownership of fields another manager owns; nil means false.
	Force *bool
	// FieldManager names the applier; required.
	FieldManager string
}

// ApplyOptions applies opts in order and returns o.
func (o *ApplyOptions) ApplyOptions(opts []ApplyOption) *ApplyOptions {
	for _, opt := range opts {
		opt.ApplyToApply(o)
	}
	return o
}

// AsPatchOptions returns the API server's form of o.
func (o *ApplyOptions) AsPatchOptions() *metav1.PatchOptions {
	return &metav1.PatchOptions{DryRun: o.DryRun, Force: o.Force, FieldManager: o.FieldManager}
}

// DeleteOptions are the options of a Delete and of the delete half of
// DeleteAllOf.
type DeleteOptions struct {
	// GracePeriodSeconds overrides the object's grace period; nil means
	// the default.
	GracePeriodSeconds *int64
	// Preconditions must hold (UID, resourceVersion) for the delete to run.
	Preconditions *metav1.Preconditions
	// PropagationPolicy chooses orphan, background or foreground deletion
	// of dependents; nil means the kind's default.
	PropagationPolicy *metav1.DeletionPropagation
	// DryRun set to []string{metav1.DryRunAll} validates without deleting.
	DryRun []string
	// Raw is used as the base of the request's options; nil means none.
	Raw *metav1.DeleteOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *DeleteOptions) ApplyOptions(opts []DeleteOption) *DeleteOptions {
	for _, opt := range opts {
		opt.ApplyToDelete(o)
	}
	return o
}

// ApplyToDelete copies o's set fields into do, so a DeleteOptions is
// itself an option.
func (o *DeleteOptions) ApplyToDelete(do *DeleteOptions) {
	if o.GracePeriodSeconds != nil {
		do.GracePeriodSeconds = o.GracePeriodSeconds
	}
	if o.Preconditions != nil {
		do.Preconditions = o.Preconditions
	}
	if o.PropagationPolicy != nil {
		do.PropagationPolicy = o.PropagationPolicy
	}
	if o.DryRun != nil {
		do.DryRun = o.DryRun
	}
	if o.Raw != nil {
		do.Raw = o.Raw
	}
}

// AsDeleteOptions returns the API server's form of o.
func (o *DeleteOptions) AsDeleteOptions() *metav1.DeleteOptions {
	out := &metav1.DeleteOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	if o.GracePeriodSeconds != nil {
		out.GracePeriodSeconds = o.GracePeriodSeconds
	}
	if o.Preconditions != nil {
		out.Preconditions = o.Preconditions
	}
	if o.PropagationPolicy != nil {
		out.PropagationPolicy = o.PropagationPolicy
	}
	out.DryRun = orStrings(o.DryRun, out.DryRun)
	return out
}

// DeleteAllOfOptions are the options of a DeleteAllOf.
type DeleteAllOfOptions struct {
	ListOptions
	DeleteOptions
	// Everything, when true, lets a DeleteAllOf with no namespace and no
	// label or field selector delete every object of the kind in the
	// cluster. False: such a DeleteAllOf is refused with
	// ErrDeleteEverything. Set it with the DeleteEverything option.
	Everything bool
}

// CheckScope returns an error wrapping ErrDeleteEverything when o has no
// namespace, no non-empty label or field selector (in its selectors or
// in Raw) and Everything is not set: a DeleteAllOf with such options
// would delete every object of the kind. An empty selector, such as
// MatchingLabels{} built from an empty map, counts as none.
func (o *DeleteAllOfOptions) CheckScope() error {
	if o.Everything || o.Namespace != "" {
		return nil
	}
	lo := o.AsListOptions()
	if lo.LabelSelector != "" || lo.FieldSelector != "" {
		return nil
	}
	return ErrDeleteEverything
}

// ApplyOptions applies opts in order and returns o.
func (o *DeleteAllOfOptions) ApplyOptions(opts []DeleteAllOfOption) *DeleteAllOfOptions {
	for _, opt := range opts {
		opt.ApplyToDeleteAllOf(o)
	}
	return o
}

// SubResourceGetOptions are the options of a subresource Get.
type SubResourceGetOptions struct {
	// Raw is passed to the API server as is; nil means none.
	Raw *metav1.GetOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *SubResourceGetOptions) ApplyOptions(opts []SubResourceGetOption) *SubResourceGetOptions {
	for _, opt := range opts {
		opt.ApplyToSubResourceGet(o)
	}
	return o
}

// SubResourceCreateOptions are the options of a subresource Create.
type SubResourceCreateOptions struct{ CreateOptions }

// ApplyOptions applies opts in order and returns o.
func (o *SubResourceCreateOptions) ApplyOptions(opts []SubResourceCreateOption) *SubResourceCreateOptions {
	for _, opt := range opts {
		opt.ApplyToSubResourceCreate(o)
	}
	return o
}

// SubResourceUpdateOptions are the options of a subresource Update.
type SubResourceUpdateOptions struct {
	UpdateOptions
	// SubResourceBody, when set, is sent instead of the object (for
	// example a Scale for the scale subresource); nil means the object.
	SubResourceBody Object
}

// ApplyOptions applies opts in order and returns o.
func (o *SubResourceUpdateOptions) ApplyOptions(opts []SubResourceUpdateOption) *SubResourceUpdateOptions {
	for _, opt := range opts {
		opt.ApplyToSubResourceUpdate(o)
	}
	return o
}

// SubResourcePatchOptions are the options of a subresource Patch.
type SubResourcePatchOptions struct {
	PatchOptions
	// SubResourceBody, when set, receives the server's answer instead of
	// the object; nil means the object.
	SubResourceBody Object
}

// ApplyOptions applies opts in order and returns o.
func (o *SubResourcePatchOptions) ApplyOptions(opts []SubResourcePatchOption) *SubResourcePatchOptions {
	for _, opt := range opts {
		opt.ApplyToSubResourcePatch(o)
	}
	return o
}

func orString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func orStrings(a, b []string) []string {
	if a != nil {
		return a
	}
	return b
}

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
		o.LabelSelector = invalidSelector{err: err}
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
			o.LabelSelector = invalidSelector{err: err}
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

func (dryRunAll) ApplyToCreate(o *CreateOptions)           { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToUpdate(o *UpdateOptions)           { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToPatch(o *PatchOptions)             { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToApply(o *ApplyOptions)             { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToDelete(o *DeleteOptions)           { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { o.DryRun = dryRunAllValue }
func (dryRunAll) ApplyToSubResourceCreate(o *SubResourceCreateOptions) {
	o.DryRun = dryRunAllValue
}
func (dryRunAll) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) {
	o.DryRun = dryRunAllValue
}
func (dryRunAll) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	o.DryRun = dryRunAllValue
}
func (dryRunAll) ApplyToSubResourceApply(o *SubResourceApplyOptions) {
	o.DryRun = dryRunAllValue
}

// FieldOwner names the writer in managedFields.
type FieldOwner string

func (f FieldOwner) ApplyToCreate(o *CreateOptions) { o.FieldManager = string(f) }
func (f FieldOwner) ApplyToUpdate(o *UpdateOptions) { o.FieldManager = string(f) }
func (f FieldOwner) ApplyToPatch(o *PatchOptions)   { o.FieldManager = string(f) }
func (f FieldOwner) ApplyToApply(o *ApplyOptions)   { o.FieldManager = string(f) }
func (f FieldOwner) ApplyToSubResourceCreate(o *SubResourceCreateOptions) {
	o.FieldManager = string(f)
}
func (f FieldOwner) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) {
	o.FieldManager = string(f)
}
func (f FieldOwner) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	o.FieldManager = string(f)
}
func (f FieldOwner) ApplyToSubResourceApply(o *SubResourceApplyOptions) {
	o.FieldManager = string(f)
}

// FieldValidation sets how the server treats unknown or duplicate fields:
// "Ignore", "Warn" or "Strict".
type FieldValidation string

func (f FieldValidation) ApplyToCreate(o *CreateOptions) { o.FieldValidation = string(f) }
func (f FieldValidation) ApplyToUpdate(o *UpdateOptions) { o.FieldValidation = string(f) }
func (f FieldValidation) ApplyToPatch(o *PatchOptions)   { o.FieldValidation = string(f) }
func (f FieldValidation) ApplyToSubResourceCreate(o *SubResourceCreateOptions) {
	o.FieldValidation = string(f)
}
func (f FieldValidation) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) {
	o.FieldValidation = string(f)
}
func (f FieldValidation) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	o.FieldValidation = string(f)
}

// ForceOwnership takes ownership of fields another manager owns in a
// server-side apply.
var ForceOwnership = forceOwnership{}

type forceOwnership struct{}

func (forceOwnership) ApplyToPatch(o *PatchOptions) { t := true; o.Force = &t }
func (forceOwnership) ApplyToApply(o *ApplyOptions) { t := true; o.Force = &t }
func (forceOwnership) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	t := true
	o.Force = &t
}
func (forceOwnership) ApplyToSubResourceApply(o *SubResourceApplyOptions) {
	t := true
	o.Force = &t
}

// GracePeriodSeconds overrides the grace period of a delete.
type GracePeriodSeconds int64

func (g GracePeriodSeconds) ApplyToDelete(o *DeleteOptions) { s := int64(g); o.GracePeriodSeconds = &s }
func (g GracePeriodSeconds) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	g.ApplyToDelete(&o.DeleteOptions)
}

// PropagationPolicy chooses how dependents of a deleted object are deleted.
type PropagationPolicy metav1.DeletionPropagation

func (p PropagationPolicy) ApplyToDelete(o *DeleteOptions) {
	v := metav1.DeletionPropagation(p)
	o.PropagationPolicy = &v
}
func (p PropagationPolicy) ApplyToDeleteAllOf(o *DeleteAllOfOptions) {
	p.ApplyToDelete(&o.DeleteOptions)
}

// Preconditions must hold for a delete to run.
type Preconditions metav1.Preconditions

func (p Preconditions) ApplyToDelete(o *DeleteOptions) {
	v := metav1.Preconditions(p)
	o.Preconditions = &v
}
func (p Preconditions) ApplyToDeleteAllOf(o *DeleteAllOfOptions) { p.ApplyToDelete(&o.DeleteOptions) }

// WithSubResourceBody sends body instead of the object in a subresource
// update or patch (for example a Scale for the scale subresource).
func WithSubResourceBody(body Object) SubResourceBody { return SubResourceBody{Body: body} }

// SubResourceBody is the option WithSubResourceBody returns.
type SubResourceBody struct{ Body Object }

func (s SubResourceBody) ApplyToSubResourceUpdate(o *SubResourceUpdateOptions) {
	o.SubResourceBody = s.Body
}
func (s SubResourceBody) ApplyToSubResourcePatch(o *SubResourcePatchOptions) {
	o.SubResourceBody = s.Body
}

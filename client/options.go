package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubeloop/kubeloop/client/internal/live"
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
	return applyAll(o, opts, GetOption.ApplyToGet)
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
	return applyAll(o, opts, ListOption.ApplyToList)
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
	return applyAll(o, opts, DeleteOption.ApplyToDelete)
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
	return live.CheckScope(o.Everything, o.Namespace, o.AsListOptions())
}

// ApplyOptions applies opts in order and returns o.
func (o *DeleteAllOfOptions) ApplyOptions(opts []DeleteAllOfOption) *DeleteAllOfOptions {
	return applyAll(o, opts, DeleteAllOfOption.ApplyToDeleteAllOf)
}

// ApplyToDeleteAllOf copies o's set fields into do.
func (o *DeleteAllOfOptions) ApplyToDeleteAllOf(do *DeleteAllOfOptions) {
	o.ListOptions.ApplyToList(&do.ListOptions)
	o.DeleteOptions.ApplyToDelete(&do.DeleteOptions)
	if o.Everything {
		do.Everything = true
	}
}

// SubResourceGetOptions are the options of a subresource Get.
type SubResourceGetOptions struct {
	// Raw is passed to the API server as is; nil means none.
	Raw *metav1.GetOptions
}

// ApplyOptions applies opts in order and returns o.
func (o *SubResourceGetOptions) ApplyOptions(opts []SubResourceGetOption) *SubResourceGetOptions {
	return applyAll(o, opts, SubResourceGetOption.ApplyToSubResourceGet)
}

// ApplyToSubResourceGet copies o's set fields into so.
func (o *SubResourceGetOptions) ApplyToSubResourceGet(so *SubResourceGetOptions) {
	so.Raw = orPtr(o.Raw, so.Raw)
}

var (
	_ GetOption                              = (*GetOptions)(nil)
	_ ListOption                             = (*ListOptions)(nil)
	_ DeleteOption                           = (*DeleteOptions)(nil)
	_ DeleteAllOfOption                      = (*DeleteAllOfOptions)(nil)
	_ SubResourceGetOption                   = (*SubResourceGetOptions)(nil)
	_ interface{ ApplyToList(*ListOptions) } = (*DeleteAllOfOptions)(nil)
)

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

// applyAll calls apply with each of opts on o, in order, and returns o.
func applyAll[T, O any](o *T, opts []O, apply func(O, *T)) *T {
	for _, opt := range opts {
		apply(opt, o)
	}
	return o
}

func orPtr[T any](a, b *T) *T {
	if a != nil {
		return a
	}
	return b
}

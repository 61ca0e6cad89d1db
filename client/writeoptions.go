package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// The options of the writes. CreateOptions, UpdateOptions and PatchOptions
// (and the subresource options that embed them) share DryRun,
// FieldManager and FieldValidation, ApplyOptions the first two: one
// writeFields view of them serves every copy between such structs and to
// the API server's options. The fields stay flat, so composite literals
// such as &client.CreateOptions{DryRun: ...} read as controller-runtime's.
// The option structs are options themselves, as in controller-runtime:
// c.Create(ctx, obj, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}})
// copies the struct's set fields into the call's options.

// writeFields points at the fields the options of a write share; a nil
// fieldValidation means the options have none.
type writeFields struct {
	dryRun          *[]string
	fieldManager    *string
	fieldValidation *string
}

// set copies src's set fields into w.
func (w writeFields) set(src writeFields) {
	if *src.dryRun != nil {
		*w.dryRun = *src.dryRun
	}
	if *src.fieldManager != "" {
		*w.fieldManager = *src.fieldManager
	}
	if src.fieldValidation != nil && *src.fieldValidation != "" {
		*w.fieldValidation = *src.fieldValidation
	}
}

// over sets the fields of the API server's options (dst), which a Raw
// base may have filled, where w's are set.
func (w writeFields) over(dryRun *[]string, fieldManager, fieldValidation *string) {
	*dryRun = orStrings(*w.dryRun, *dryRun)
	*fieldManager = orString(*w.fieldManager, *fieldManager)
	*fieldValidation = orString(*w.fieldValidation, *fieldValidation)
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

func (o *CreateOptions) fields() writeFields {
	return writeFields{&o.DryRun, &o.FieldManager, &o.FieldValidation}
}

// ApplyOptions applies opts in order and returns o.
func (o *CreateOptions) ApplyOptions(opts []CreateOption) *CreateOptions {
	return applyAll(o, opts, CreateOption.ApplyToCreate)
}

// ApplyToCreate copies o's set fields into co.
func (o *CreateOptions) ApplyToCreate(co *CreateOptions) {
	co.fields().set(o.fields())
	co.Raw = orPtr(o.Raw, co.Raw)
}

// ApplyToSubResourceCreate copies o's set fields into co's create options.
func (o *CreateOptions) ApplyToSubResourceCreate(co *SubResourceCreateOptions) {
	o.ApplyToCreate(&co.CreateOptions)
}

// AsCreateOptions returns the API server's form of o.
func (o *CreateOptions) AsCreateOptions() *metav1.CreateOptions {
	out := &metav1.CreateOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	o.fields().over(&out.DryRun, &out.FieldManager, &out.FieldValidation)
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

func (o *UpdateOptions) fields() writeFields {
	return writeFields{&o.DryRun, &o.FieldManager, &o.FieldValidation}
}

// ApplyOptions applies opts in order and returns o.
func (o *UpdateOptions) ApplyOptions(opts []UpdateOption) *UpdateOptions {
	return applyAll(o, opts, UpdateOption.ApplyToUpdate)
}

// ApplyToUpdate copies o's set fields into uo.
func (o *UpdateOptions) ApplyToUpdate(uo *UpdateOptions) {
	uo.fields().set(o.fields())
	uo.Raw = orPtr(o.Raw, uo.Raw)
}

// ApplyToSubResourceUpdate copies o's set fields into uo's update options.
func (o *UpdateOptions) ApplyToSubResourceUpdate(uo *SubResourceUpdateOptions) {
	o.ApplyToUpdate(&uo.UpdateOptions)
}

// AsUpdateOptions returns the API server's form of o.
func (o *UpdateOptions) AsUpdateOptions() *metav1.UpdateOptions {
	out := &metav1.UpdateOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	o.fields().over(&out.DryRun, &out.FieldManager, &out.FieldValidation)
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

func (o *PatchOptions) fields() writeFields {
	return writeFields{&o.DryRun, &o.FieldManager, &o.FieldValidation}
}

// ApplyOptions applies opts in order and returns o.
func (o *PatchOptions) ApplyOptions(opts []PatchOption) *PatchOptions {
	return applyAll(o, opts, PatchOption.ApplyToPatch)
}

// ApplyToPatch copies o's set fields into po.
func (o *PatchOptions) ApplyToPatch(po *PatchOptions) {
	po.fields().set(o.fields())
	po.Force = orPtr(o.Force, po.Force)
	po.Raw = orPtr(o.Raw, po.Raw)
}

// ApplyToSubResourcePatch copies o's set fields into po's patch options.
func (o *PatchOptions) ApplyToSubResourcePatch(po *SubResourcePatchOptions) {
	o.ApplyToPatch(&po.PatchOptions)
}

// AsPatchOptions returns the API server's form of o.
func (o *PatchOptions) AsPatchOptions() *metav1.PatchOptions {
	out := &metav1.PatchOptions{}
	if o.Raw != nil {
		*out = *o.Raw
	}
	o.fields().over(&out.DryRun, &out.FieldManager, &out.FieldValidation)
	out.Force = orPtr(o.Force, out.Force)
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

func (o *ApplyOptions) fields() writeFields {
	return writeFields{dryRun: &o.DryRun, fieldManager: &o.FieldManager}
}

// ApplyOptions applies opts in order and returns o.
func (o *ApplyOptions) ApplyOptions(opts []ApplyOption) *ApplyOptions {
	return applyAll(o, opts, ApplyOption.ApplyToApply)
}

// ApplyToApply copies o's set fields into ao.
func (o *ApplyOptions) ApplyToApply(ao *ApplyOptions) {
	ao.fields().set(o.fields())
	ao.Force = orPtr(o.Force, ao.Force)
}

// AsPatchOptions returns the API server's form of o.
func (o *ApplyOptions) AsPatchOptions() *metav1.PatchOptions {
	return &metav1.PatchOptions{DryRun: o.DryRun, Force: o.Force, FieldManager: o.FieldManager}
}

// SubResourceCreateOptions are the options of a subresource Create.
type SubResourceCreateOptions struct{ CreateOptions }

// ApplyOptions applies opts in order and returns o.
func (o *SubResourceCreateOptions) ApplyOptions(opts []SubResourceCreateOption) *SubResourceCreateOptions {
	return applyAll(o, opts, SubResourceCreateOption.ApplyToSubResourceCreate)
}

// ApplyToSubResourceCreate copies o's set fields into co.
func (o *SubResourceCreateOptions) ApplyToSubResourceCreate(co *SubResourceCreateOptions) {
	o.CreateOptions.ApplyToCreate(&co.CreateOptions)
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
	return applyAll(o, opts, SubResourceUpdateOption.ApplyToSubResourceUpdate)
}

// ApplyToSubResourceUpdate copies o's set fields into uo.
func (o *SubResourceUpdateOptions) ApplyToSubResourceUpdate(uo *SubResourceUpdateOptions) {
	o.UpdateOptions.ApplyToUpdate(&uo.UpdateOptions)
	if o.SubResourceBody != nil {
		uo.SubResourceBody = o.SubResourceBody
	}
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
	return applyAll(o, opts, SubResourcePatchOption.ApplyToSubResourcePatch)
}

// ApplyToSubResourcePatch copies o's set fields into po.
func (o *SubResourcePatchOptions) ApplyToSubResourcePatch(po *SubResourcePatchOptions) {
	o.PatchOptions.ApplyToPatch(&po.PatchOptions)
	if o.SubResourceBody != nil {
		po.SubResourceBody = o.SubResourceBody
	}
}

// SubResourceApplyOption modifies a subresource Apply.
type SubResourceApplyOption interface {
	ApplyToSubResourceApply(*SubResourceApplyOptions)
}

// SubResourceApplyOptions are the options of a subresource Apply. A
// *SubResourceApplyOptions is itself an option that sets its non-zero
// fields, to pass a SubResourceBody.
type SubResourceApplyOptions struct {
	ApplyOptions
	// SubResourceBody, when set, is sent instead of the object and
	// receives the server's answer (an autoscaling/v1 Scale configuration
	// for "scale", for example); the object then only names the parent.
	SubResourceBody runtime.ApplyConfiguration
}

// ApplyOpts applies opts in order and returns o (controller-runtime's
// name: the embedded ApplyOptions takes the usual one).
func (o *SubResourceApplyOptions) ApplyOpts(opts []SubResourceApplyOption) *SubResourceApplyOptions {
	return applyAll(o, opts, SubResourceApplyOption.ApplyToSubResourceApply)
}

// ApplyToSubResourceApply sets the non-zero fields of o on other.
func (o *SubResourceApplyOptions) ApplyToSubResourceApply(other *SubResourceApplyOptions) {
	o.ApplyOptions.ApplyToApply(&other.ApplyOptions)
	if o.SubResourceBody != nil {
		other.SubResourceBody = o.SubResourceBody
	}
}

var (
	_ CreateOption            = (*CreateOptions)(nil)
	_ UpdateOption            = (*UpdateOptions)(nil)
	_ PatchOption             = (*PatchOptions)(nil)
	_ ApplyOption             = (*ApplyOptions)(nil)
	_ SubResourceCreateOption = (*SubResourceCreateOptions)(nil)
	_ SubResourceUpdateOption = (*SubResourceUpdateOptions)(nil)
	_ SubResourcePatchOption  = (*SubResourcePatchOptions)(nil)
	_ SubResourceApplyOption  = (*SubResourceApplyOptions)(nil)
	_ SubResourceCreateOption = (*CreateOptions)(nil)
	_ SubResourceUpdateOption = (*UpdateOptions)(nil)
	_ SubResourcePatchOption  = (*PatchOptions)(nil)
)

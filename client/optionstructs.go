package client

// The option structs are options themselves, as in controller-runtime:
// c.Create(ctx, obj, &client.CreateOptions{DryRun: []string{metav1.DryRunAll}})
// copies the struct's set fields into the call's options. (GetOptions,
// ListOptions, DeleteOptions and SubResourceApplyOptions have theirs
// beside their types.)

var (
	_ CreateOption                           = (*CreateOptions)(nil)
	_ UpdateOption                           = (*UpdateOptions)(nil)
	_ PatchOption                            = (*PatchOptions)(nil)
	_ ApplyOption                            = (*ApplyOptions)(nil)
	_ DeleteAllOfOption                      = (*DeleteAllOfOptions)(nil)
	_ SubResourceGetOption                   = (*SubResourceGetOptions)(nil)
	_ SubResourceCreateOption                = (*SubResourceCreateOptions)(nil)
	_ SubResourceUpdateOption                = (*SubResourceUpdateOptions)(nil)
	_ SubResourcePatchOption                 = (*SubResourcePatchOptions)(nil)
	_ SubResourceApplyOption                 = (*SubResourceApplyOptions)(nil)
	_ GetOption                              = (*GetOptions)(nil)
	_ ListOption                             = (*ListOptions)(nil)
	_ DeleteOption                           = (*DeleteOptions)(nil)
	_ SubResourceCreateOption                = (*CreateOptions)(nil)
	_ SubResourceUpdateOption                = (*UpdateOptions)(nil)
	_ SubResourcePatchOption                 = (*PatchOptions)(nil)
	_ interface{ ApplyToList(*ListOptions) } = (*DeleteAllOfOptions)(nil)
)

// ApplyToCreate copies o's set fields into co.
func (o *CreateOptions) ApplyToCreate(co *CreateOptions) {
	if o.DryRun != nil {
		co.DryRun = o.DryRun
	}
	if o.FieldManager != "" {
		co.FieldManager = o.FieldManager
	}
	if o.FieldValidation != "" {
		co.FieldValidation = o.FieldValidation
	}
	if o.Raw != nil {
		co.Raw = o.Raw
	}
}

// ApplyToSubResourceCreate copies o's set fields into co's create options.
func (o *CreateOptions) ApplyToSubResourceCreate(co *SubResourceCreateOptions) {
	o.ApplyToCreate(&co.CreateOptions)
}

// ApplyToUpdate copies o's set fields into uo.
func (o *UpdateOptions) ApplyToUpdate(uo *UpdateOptions) {
	if o.DryRun != nil {
		uo.DryRun = o.DryRun
	}
	if o.FieldManager != "" {
		uo.FieldManager = o.FieldManager
	}
	if o.FieldValidation != "" {
		uo.FieldValidation = o.FieldValidation
	}
	if o.Raw != nil {
		uo.Raw = o.Raw
	}
}

// ApplyToSubResourceUpdate copies o's set fields into uo's update options.
func (o *UpdateOptions) ApplyToSubResourceUpdate(uo *SubResourceUpdateOptions) {
	o.ApplyToUpdate(&uo.UpdateOptions)
}

// ApplyToPatch copies o's set fields into po.
func (o *PatchOptions) ApplyToPatch(po *PatchOptions) {
	if o.DryRun != nil {
		po.DryRun = o.DryRun
	}
	if o.Force != nil {
		po.Force = o.Force
	}
	if o.FieldManager != "" {
		po.FieldManager = o.FieldManager
	}
	if o.FieldValidation != "" {
		po.FieldValidation = o.FieldValidation
	}
	if o.Raw != nil {
		po.Raw = o.Raw
	}
}

// ApplyToSubResourcePatch copies o's set fields into po's patch options.
func (o *PatchOptions) ApplyToSubResourcePatch(po *SubResourcePatchOptions) {
	o.ApplyToPatch(&po.PatchOptions)
}

// ApplyToApply copies o's set fields into ao.
func (o *ApplyOptions) ApplyToApply(ao *ApplyOptions) {
	if o.DryRun != nil {
		ao.DryRun = o.DryRun
	}
	if o.Force != nil {
		ao.Force = o.Force
	}
	if o.FieldManager != "" {
		ao.FieldManager = o.FieldManager
	}
}

// ApplyToDeleteAllOf copies o's set fields into do.
func (o *DeleteAllOfOptions) ApplyToDeleteAllOf(do *DeleteAllOfOptions) {
	o.ListOptions.ApplyToList(&do.ListOptions)
	o.DeleteOptions.ApplyToDelete(&do.DeleteOptions)
	if o.Everything {
		do.Everything = true
	}
}

// ApplyToSubResourceGet copies o's set fields into so.
func (o *SubResourceGetOptions) ApplyToSubResourceGet(so *SubResourceGetOptions) {
	if o.Raw != nil {
		so.Raw = o.Raw
	}
}

// ApplyToSubResourceCreate copies o's set fields into co.
func (o *SubResourceCreateOptions) ApplyToSubResourceCreate(co *SubResourceCreateOptions) {
	o.CreateOptions.ApplyToCreate(&co.CreateOptions)
}

// ApplyToSubResourceUpdate copies o's set fields into uo.
func (o *SubResourceUpdateOptions) ApplyToSubResourceUpdate(uo *SubResourceUpdateOptions) {
	o.UpdateOptions.ApplyToUpdate(&uo.UpdateOptions)
	if o.SubResourceBody != nil {
		uo.SubResourceBody = o.SubResourceBody
	}
}

// ApplyToSubResourcePatch copies o's set fields into po.
func (o *SubResourcePatchOptions) ApplyToSubResourcePatch(po *SubResourcePatchOptions) {
	o.PatchOptions.ApplyToPatch(&po.PatchOptions)
	if o.SubResourceBody != nil {
		po.SubResourceBody = o.SubResourceBody
	}
}

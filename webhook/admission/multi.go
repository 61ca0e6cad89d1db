package admission

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
)

// MultiMutatingHandler returns a Handler that calls handlers in order and
// admits with the patches of all of them (they should touch disjoint
// paths: each patch is computed against the object the API server sent).
// The first answer that does not admit is returned as it is; a handler
// that answers with a patch type other than JSONPatch fails the request
// with code 500. Warnings are collected.
func MultiMutatingHandler(handlers ...Handler) Handler {
	return HandlerFunc(func(ctx context.Context, req Request) Response {
		var patches []PatchOperation
		var warnings []string
		for i, h := range handlers {
			resp := h.Handle(ctx, req)
			if !resp.Allowed {
				return resp
			}
			if resp.PatchType != nil && *resp.PatchType != admissionv1.PatchTypeJSONPatch {
				return Errored(http.StatusInternalServerError,
					fmt.Errorf("admission: mutating handler %d answered with patch type %s; only %s can be combined", i, *resp.PatchType, admissionv1.PatchTypeJSONPatch))
			}
			patches = append(patches, resp.Patches...)
			warnings = append(warnings, resp.Warnings...)
		}
		return Patched("", patches...).WithWarnings(warnings...)
	})
}

// MultiValidatingHandler returns a Handler that calls handlers in order
// and admits when every one does; the first answer that does not admit is
// returned as it is. Warnings are collected.
func MultiValidatingHandler(handlers ...Handler) Handler {
	return HandlerFunc(func(ctx context.Context, req Request) Response {
		var warnings []string
		for _, h := range handlers {
			resp := h.Handle(ctx, req)
			if !resp.Allowed {
				return resp
			}
			warnings = append(warnings, resp.Warnings...)
		}
		return Allowed("").WithWarnings(warnings...)
	})
}

// Package objmap keeps objects in the form the fake client stores them:
// the JSON-like map that runtime.DefaultUnstructuredConverter produces,
// with apiVersion and kind set. It converts typed, unstructured and
// metadata-only objects in and out of that form and applies patches to
// it.
//
// Guarantees:
//   - Into fills the caller's object from a deep copy: nothing a caller
//     holds aliases a stored map.
//   - Typed objects come back without apiVersion and kind, as from the API
//     server; unstructured and metadata-only ones keep theirs.
//   - Patch and PatchJSON fail with the API server's status errors: 400
//     for a malformed patch, 422 for a JSON patch that does not apply, 415
//     for a patch type the kind does not accept.
package objmap

// Package client reads and writes Kubernetes objects: typed objects
// registered in a runtime.Scheme, *unstructured.Unstructured for any kind
// without Go types, and *metav1.PartialObjectMetadata for metadata only.
//
// The method set and option types are controller-runtime's, so code written
// against controller-runtime's client compiles against this one with an
// import change (see MIGRATING.md for the few differences).
//
// Guarantees:
//   - Errors name the object and the verb ("update apps/v1 Deployment
//     default/web: ..."); the API status error stays reachable with
//     errors.As and apierrors.IsNotFound and friends.
//   - Bad input is an error, never a panic: a nil object, a type the scheme
//     does not know, a missing name, an invalid selector.
//   - Built-in types travel as protobuf; custom resources as JSON.
package client

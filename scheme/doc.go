// Package scheme registers the Go types of one API group version in a
// runtime.Scheme. It is the builder kubebuilder's API packages use, so an
// api/<version>/groupversion_info.go ports by its import alone:
//
//	var (
//		GroupVersion  = schema.GroupVersion{Group: "webapp.example.com", Version: "v1"}
//		SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}
//		AddToScheme   = SchemeBuilder.AddToScheme
//	)
//
//	func init() { SchemeBuilder.Register(&Guestbook{}, &GuestbookList{}) }
//
// and the program adds the group to its scheme with
// webappv1.AddToScheme(scheme). Code generators' output compiles too:
// the embedded runtime.SchemeBuilder (field SchemeBuilder) takes
// conversion-gen's and defaulter-gen's functions,
//
//	var localSchemeBuilder = &SchemeBuilder.SchemeBuilder
//
//	func init() { localSchemeBuilder.Register(RegisterConversions) }
//
// and RegisterAll merges Builders, as in controller-runtime.
//
// Guarantees:
//   - AddToScheme registers every object given to Register before the call,
//     including registrations made after the method value AddToScheme was
//     taken (the package-level var above is taken before init runs).
//   - It also registers the group version's meta types (ListOptions,
//     GetOptions, WatchEvent, ...), as metav1.AddToGroupVersion does, so
//     that clients can list, watch and delete the group's kinds.
//   - Problems with Register's objects are errors, never panics: an empty
//     Version, an object that is not a pointer to a struct, or a kind the
//     scheme already maps to another Go type in this group version
//     (ErrInvalid). SchemeBuilder functions are the generators' or the
//     user's code, run as they are.
//   - The SchemeBuilder functions run after the objects are registered,
//     in the order they were added; the first error stops them.
//   - Adding the same objects to the same scheme twice is harmless.
//
// A Builder is meant to be filled during package initialisation and read
// afterwards; Register is not safe for concurrent use with AddToScheme.
package scheme

// Package scope tells the fake client what the API server knows about a
// kind without asking one: whether it is namespaced, what its resource is
// called, whether it has a status subresource and whether it carries a
// generation. It reads only the scheme, the mapper a test gives and the
// CustomResourceDefinitions a test seeds.
//
// How a kind's scope is found, first answer wins:
//  1. the mapper given with the builder's WithRESTMapper;
//  2. the CustomResourceDefinitions given with WithObjects (typed or
//     unstructured, apiextensions.k8s.io v1 or v1beta1): their spec.scope;
//  3. the built-in kinds (the scheme's kinds from k8s.io/api, and the
//     cluster-scoped groups and kinds of the API server itself);
//  4. otherwise, as controller-runtime's fake, whatever the object or key
//     says: namespaced when it names a namespace, cluster-scoped when not.
//
// Guarantees:
//   - Kinds.RESTMapper answers from 1 to 3, then maps the scheme's other
//     kinds as namespaced (callers that only want a resource name rely on
//     it).
//   - A kind two mappers know is not ambiguous: the earlier one wins
//     (First, unlike meta.MultiRESTMapper).
//   - Everything here is read-only after New and safe for concurrent use.
package scope

// Package crd reads CustomResourceDefinitions from manifest files and
// installs them, for envtest: Install returns only once every CRD can be
// used at once by a test.
//
// Guarantees:
//   - Install creates each CRD, or updates the one of its name, and
//     returns once each is Established and each served version answers
//     discovery and a list; the answer names the CRDs it created (not
//     updated), so that a caller deletes only those.
//   - Readiness is checked with plain requests, not client-go's clients,
//     which would sleep through the API server's early "429, retry after
//     1s" answers for a new resource.
//   - Install sends one dry-run create per CRD's storage version, all at
//     once, before returning: kube-apiserver's slow first write of a new
//     resource is paid there, not by the test's first write.
//   - Uninstall ignores CRDs already gone; its error names every CRD it
//     could not delete.
//   - Read fails on a document that is not a CustomResourceDefinition,
//     naming the file and the document's index.
package crd

// Package envtestusers has an envtest suite as cybozu-go/accurate writes
// them: CRDs built as typed apiextensionsv1 objects (from kustomize
// output) in Environment.CRDs, and a user without roles from
// AddUser(user, nil), whose requests envtest's RBAC refuses.
package envtestusers

package scope

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// First asks its mappers in order and returns the first answer that is
// not a no-match error. Unlike meta.MultiRESTMapper, a kind two mappers
// know is not ambiguous: the earlier mapper wins, so a test's mapper can
// override the scheme's guess.
type First []meta.RESTMapper

var _ meta.RESTMapper = First(nil)

func firstOf[T any](m First, ask func(meta.RESTMapper) (T, error)) (T, error) {
	var zero T
	var last error
	for _, r := range m {
		v, err := ask(r)
		if err == nil {
			return v, nil
		}
		if !meta.IsNoMatchError(err) {
			return zero, err
		}
		last = err
	}
	if last == nil {
		last = &meta.NoResourceMatchError{}
	}
	return zero, last
}

// KindFor returns the first mapper's answer.
func (m First) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return firstOf(m, func(x meta.RESTMapper) (schema.GroupVersionKind, error) { return x.KindFor(r) })
}

// KindsFor returns the first mapper's answer.
func (m First) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return firstOf(m, func(x meta.RESTMapper) ([]schema.GroupVersionKind, error) { return x.KindsFor(r) })
}

// ResourceFor returns the first mapper's answer.
func (m First) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return firstOf(m, func(x meta.RESTMapper) (schema.GroupVersionResource, error) { return x.ResourceFor(r) })
}

// ResourcesFor returns the first mapper's answer.
func (m First) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return firstOf(m, func(x meta.RESTMapper) ([]schema.GroupVersionResource, error) { return x.ResourcesFor(r) })
}

// RESTMapping returns the first mapper's answer, or a NoKindMatchError
// naming gk when none knows it.
func (m First) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	mapping, err := firstOf(m, func(x meta.RESTMapper) (*meta.RESTMapping, error) { return x.RESTMapping(gk, versions...) })
	if err != nil && meta.IsNoMatchError(err) {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	return mapping, err
}

// RESTMappings returns the first mapper's answer.
func (m First) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return firstOf(m, func(x meta.RESTMapper) ([]*meta.RESTMapping, error) { return x.RESTMappings(gk, versions...) })
}

// ResourceSingularizer returns the first mapper's answer.
func (m First) ResourceSingularizer(resource string) (string, error) {
	return firstOf(m, func(x meta.RESTMapper) (string, error) { return x.ResourceSingularizer(resource) })
}

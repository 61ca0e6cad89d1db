package conversion

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// IsConvertible reports whether the kind of obj can be served by a
// conversion Webhook: it has more than one version in scheme, exactly one
// of them is a Hub and every other is Convertible. It returns false and no
// error for a kind with one version in scheme (whatever it implements) or
// whose versions implement neither, and an error that
// names the versions for a kind that is half set up (two hubs, or a
// version that is neither Hub nor Convertible beside one that is).
func IsConvertible(scheme *runtime.Scheme, obj runtime.Object) (bool, error) {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil {
		return false, fmt.Errorf("conversion: kind of %T: %w", obj, err)
	}
	gk := gvks[0].GroupKind()
	versions := versionsOf(scheme, gk)
	if len(versions) == 1 {
		// A single version has nothing to convert between, whatever it
		// implements: controller-runtime's IsConvertible says so too. A
		// Convertible whose hub is another kind (trust-manager's Bundle
		// converting to ClusterBundle) is served by a converter of its own.
		return false, nil
	}
	var hubs, convertibles, others []string
	for _, gvk := range versions {
		o, err := scheme.New(gvk)
		if err != nil {
			return false, fmt.Errorf("conversion: %s: %w", gvk, err)
		}
		switch o.(type) {
		case Hub:
			hubs = append(hubs, gvk.Version)
		case Convertible:
			convertibles = append(convertibles, gvk.Version)
		default:
			others = append(others, gvk.Version)
		}
	}
	switch {
	case len(hubs) == 0 && len(convertibles) == 0:
		return false, nil
	case len(hubs) > 1:
		return false, fmt.Errorf("conversion: %s has several hubs: versions %v", gk, hubs)
	case len(hubs) == 0:
		return false, fmt.Errorf("conversion: %s has no hub; versions %v are Convertible", gk, convertibles)
	case len(others) > 0:
		return false, fmt.Errorf("conversion: %s versions %v are neither Hub nor Convertible", gk, others)
	case len(convertibles) == 0:
		return false, nil // a hub alone has nothing to convert
	}
	return true, nil
}

// findHub returns a new object of the Hub version of gk.
func findHub(scheme *runtime.Scheme, gk schema.GroupKind) (Hub, error) {
	for _, gvk := range versionsOf(scheme, gk) {
		o, err := scheme.New(gvk)
		if err != nil {
			continue
		}
		if hub, ok := o.(Hub); ok {
			hub.GetObjectKind().SetGroupVersionKind(gvk)
			return hub, nil
		}
	}
	return nil, errors.New("conversion: no hub version of " + gk.String())
}

// versionsOf returns the kinds of gk registered in scheme, sorted.
func versionsOf(scheme *runtime.Scheme, gk schema.GroupKind) []schema.GroupVersionKind {
	var out []schema.GroupVersionKind
	for gvk := range scheme.AllKnownTypes() {
		if gvk.GroupKind() == gk {
			out = append(out, gvk)
		}
	}
	slices.SortFunc(out, func(a, b schema.GroupVersionKind) int {
		if a.Version < b.Version {
			return -1
		}
		if a.Version > b.Version {
			return 1
		}
		return 0
	})
	return out
}

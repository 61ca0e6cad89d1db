package controllerutil

import "github.com/kubeloop/kubeloop/client"

// AddFinalizer adds finalizer to o unless it is there, and reports whether
// it changed o.
func AddFinalizer(o client.Object, finalizer string) (finalizersUpdated bool) {
	if ContainsFinalizer(o, finalizer) {
		return false
	}
	o.SetFinalizers(append(o.GetFinalizers(), finalizer))
	return true
}

// RemoveFinalizer removes every occurrence of finalizer from o, and
// reports whether it changed o.
func RemoveFinalizer(o client.Object, finalizer string) (finalizersUpdated bool) {
	f := o.GetFinalizers()
	out := make([]string, 0, len(f))
	for _, s := range f {
		if s != finalizer {
			out = append(out, s)
		}
	}
	if len(out) == len(f) {
		return false
	}
	o.SetFinalizers(out)
	return true
}

// ContainsFinalizer reports whether o has finalizer.
func ContainsFinalizer(o client.Object, finalizer string) bool {
	for _, s := range o.GetFinalizers() {
		if s == finalizer {
			return true
		}
	}
	return false
}

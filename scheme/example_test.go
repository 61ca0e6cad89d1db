package scheme_test

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubeloop/kubeloop/scheme"
)

// An API package's groupversion_info.go, as kubebuilder scaffolds it.
var (
	SchemeBuilder = &scheme.Builder{GroupVersion: gv}
	AddToScheme   = SchemeBuilder.AddToScheme
)

func init() { SchemeBuilder.Register(&Guestbook{}, &GuestbookList{}) }

func ExampleBuilder() {
	s := runtime.NewScheme()
	if err := AddToScheme(s); err != nil {
		panic(err)
	}
	gvks, _, _ := s.ObjectKinds(&Guestbook{})
	fmt.Println(gvks[0])
	// Output: webapp.example.com/v1, Kind=Guestbook
}

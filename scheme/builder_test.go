package scheme_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/scheme"
)

var gv = schema.GroupVersion{Group: "webapp.example.com", Version: "v1"}

// Guestbook and GuestbookList stand for an API package's types.
type Guestbook struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              string `json:"spec,omitempty"`
}

func (g *Guestbook) DeepCopyObject() runtime.Object {
	c := *g
	g.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}

type GuestbookList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Guestbook `json:"items"`
}

func (l *GuestbookList) DeepCopyObject() runtime.Object {
	c := *l
	c.Items = append([]Guestbook(nil), l.Items...)
	return &c
}

// Other has a kind name of its own but is registered as "Guestbook" by a
// second Go type in a conflicting test.
type Other struct{ Guestbook }

func TestAddToSchemeRegistersKindsAndMetaTypes(t *testing.T) {
	b := &scheme.Builder{GroupVersion: gv}
	addToScheme := b.AddToScheme // taken before Register, as kubebuilder's var block does
	b.Register(&Guestbook{}).Register(&GuestbookList{})

	s := runtime.NewScheme()
	require.NoError(t, addToScheme(s))

	for _, tc := range []struct {
		give runtime.Object
		want string
	}{
		{&Guestbook{}, "Guestbook"},
		{&GuestbookList{}, "GuestbookList"},
		{&metav1.ListOptions{}, "ListOptions"},
		{&metav1.DeleteOptions{}, "DeleteOptions"},
	} {
		gvks, _, err := s.ObjectKinds(tc.give)
		require.NoError(t, err, tc.want)
		assert.Contains(t, gvks, gv.WithKind(tc.want))
	}
	obj, err := s.New(gv.WithKind("Guestbook"))
	require.NoError(t, err)
	assert.IsType(t, &Guestbook{}, obj)

	require.NoError(t, addToScheme(s), "adding the same types twice is harmless")
}

func TestBuild(t *testing.T) {
	s, err := (&scheme.Builder{GroupVersion: gv}).Register(&Guestbook{}).Build()
	require.NoError(t, err)
	assert.True(t, s.Recognizes(gv.WithKind("Guestbook")))
	assert.False(t, s.Recognizes(schema.GroupVersionKind{Version: "v1", Kind: "Pod"}), "Build starts from an empty scheme")
}

func TestAddToSchemeErrors(t *testing.T) {
	conflicting := runtime.NewScheme()
	conflicting.AddKnownTypeWithName(gv.WithKind("Guestbook"), &Other{})

	for _, tc := range []struct {
		name    string
		builder *scheme.Builder
		scheme  *runtime.Scheme
		want    []string
	}{
		{"no version", (&scheme.Builder{GroupVersion: schema.GroupVersion{Group: "g"}}).Register(&Guestbook{}), runtime.NewScheme(),
			[]string{`group "g": GroupVersion.Version is empty`}},
		{"nil scheme", &scheme.Builder{GroupVersion: gv}, nil, []string{"nil scheme"}},
		{"not a pointer to a struct", (&scheme.Builder{GroupVersion: gv}).Register(&Guestbook{}, nil), runtime.NewScheme(),
			[]string{"object 1 is <nil>, not a pointer to a struct"}},
		{"kind taken in the scheme", (&scheme.Builder{GroupVersion: gv}).Register(&Guestbook{}), conflicting,
			[]string{"Kind=Guestbook: scheme_test.Guestbook is already registered as scheme_test.Other"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.builder.AddToScheme(tc.scheme)
			require.ErrorIs(t, err, scheme.ErrInvalid)
			for _, w := range tc.want {
				assert.ErrorContains(t, err, w)
			}
		})
	}
	assert.False(t, conflicting.Recognizes(gv.WithKind("GuestbookList")), "a failed AddToScheme changes nothing")
}

package live

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// The requests themselves are tested against a real API server by the
// client package's conformance tests; these cover what needs none.

func TestCheckScope(t *testing.T) {
	everything := &metav1.ListOptions{}
	assert.ErrorIs(t, CheckScope(false, "", everything), ErrDeleteEverything)
	assert.NoError(t, CheckScope(true, "", everything))
	assert.NoError(t, CheckScope(false, "ns", everything))
	assert.NoError(t, CheckScope(false, "", &metav1.ListOptions{LabelSelector: "a=b"}))
	assert.NoError(t, CheckScope(false, "", &metav1.ListOptions{FieldSelector: "x=y"}))
}

func TestSelectorError(t *testing.T) {
	boom := errors.New("boom")
	assert.NoError(t, SelectorError(nil))
	sel := InvalidSelector(boom)
	assert.ErrorIs(t, SelectorError(sel), boom)
	assert.False(t, sel.Matches(nil), "an invalid selector matches nothing")
}

func ExampleApplyTargetOf() {
	t, err := ApplyTargetOf(corev1ac.ConfigMap("web", "default"))
	fmt.Println(t.GVK.Kind, t.Namespace, t.Name, err)
	_, err = ApplyTargetOf(corev1ac.ConfigMap("", "default"))
	fmt.Println(err)
	// Output:
	// ConfigMap default web <nil>
	// apply v1, Kind=ConfigMap default: client: name is required
}

package kinds

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestString(t *testing.T) {
	assert.Equal(t, "apps/v1, Kind=Deployment", String(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}))
	assert.Equal(t, "v1, Kind=ConfigMap", String(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}))
}

func TestOpError(t *testing.T) {
	cause := errors.New("boom")
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	err := OpError("get", gvk, "default", "web", cause)
	assert.EqualError(t, err, "get v1, Kind=ConfigMap default/web: boom")
	assert.ErrorIs(t, err, cause)
	assert.EqualError(t, OpError("get", gvk, "", "web", cause), "get v1, Kind=ConfigMap web: boom")
	assert.EqualError(t, OpError("list", gvk, "", "", cause), "list v1, Kind=ConfigMap: boom")
	assert.NoError(t, OpError("get", gvk, "default", "web", nil))
}

func TestTrimList(t *testing.T) {
	tests := []struct{ give, want string }{
		{"ConfigMapList", "ConfigMap"},
		{"ConfigMap", "ConfigMap"},
		{"List", "List"},
		{"", ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, TrimList(tt.give), tt.give)
	}
}

func TestCheck(t *testing.T) {
	gvk := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	tests := []struct {
		name       string
		namespaced bool
		ns, obj    string
		want       error
	}{
		{name: "ok", namespaced: true, ns: "default", obj: "x"},
		{name: "no name", namespaced: true, ns: "default", want: ErrNameRequired},
		{name: "no namespace", namespaced: true, obj: "x", want: ErrNamespaceRequired},
		{name: "upper case namespace", namespaced: true, ns: "Default", obj: "x", want: ErrNamespaceInvalid},
		{name: "underscore", namespaced: true, ns: "a_b", obj: "x", want: ErrNamespaceInvalid},
		{name: "leading dash", namespaced: true, ns: "-a", obj: "x", want: ErrNamespaceInvalid},
		{name: "trailing dash", namespaced: true, ns: "a-", obj: "x", want: ErrNamespaceInvalid},
		{name: "too long", namespaced: true, ns: "a" + string(make([]byte, 63)), obj: "x", want: ErrNamespaceInvalid},
		{name: "63 characters", namespaced: true, ns: "a23456789012345678901234567890123456789012345678901234567890123", obj: "x"},
		{name: "cluster-scoped read ignores a namespace", ns: "default", obj: "x"},
		{name: "cluster-scoped object", obj: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckKey("get", gvk, tt.namespaced, tt.ns, tt.obj)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, tt.want)
			assert.Contains(t, err.Error(), "get v1, Kind=ConfigMap")
		})
	}
}

func TestIsNil(t *testing.T) {
	var p *struct{}
	var m map[string]int
	var s []int
	var e error
	for _, v := range []any{nil, p, m, s, e} {
		if !IsNil(v) {
			t.Errorf("IsNil(%#v) = false", v)
		}
	}
	for _, v := range []any{&struct{}{}, map[string]int{}, []int{}, 0, ""} {
		if IsNil(v) {
			t.Errorf("IsNil(%#v) = true", v)
		}
	}
}

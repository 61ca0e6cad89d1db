package patch

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

var errNil = errors.New("nil")

func TestMerge(t *testing.T) {
	from := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", ResourceVersion: "7"}, Data: map[string]string{"k": "v"}}
	to := from.DeepCopy()
	to.Data["k"] = "w"
	tests := []struct {
		name     string
		pt       types.PatchType
		from, to metav1.Object
		lock     bool
		want     string
		wantErr  string
	}{
		{name: "merge", pt: types.MergePatchType, from: from, to: to, want: `{"data":{"k":"w"}}`},
		{name: "locked", pt: types.MergePatchType, from: from, to: to, lock: true, want: `{"data":{"k":"w"},"metadata":{"resourceVersion":"7"}}`},
		{name: "strategic", pt: types.StrategicMergePatchType, from: from, to: to, want: `{"data":{"k":"w"}}`},
		{name: "nil original", pt: types.MergePatchType, from: (*corev1.ConfigMap)(nil), to: to, wantErr: "merge patch: nil"},
		{name: "other type", pt: types.MergePatchType, from: &corev1.Secret{}, to: to, wantErr: "original is *v1.Secret but the object is *v1.ConfigMap"},
		{name: "strategic unstructured", pt: types.StrategicMergePatchType, from: &unstructured.Unstructured{Object: map[string]any{}},
			to: &unstructured.Unstructured{Object: map[string]any{}}, wantErr: "has no Go type to read merge keys from"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Merge(tt.pt, tt.from, tt.to, tt.lock, errNil)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
		})
	}
}

func ExampleMerge() {
	before := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	after := before.DeepCopy()
	after.Labels = map[string]string{"app": "web"}
	data, err := Merge(types.MergePatchType, before, after, false, errNil)
	fmt.Println(string(data), err)
	// Output: {"metadata":{"labels":{"app":"web"}}} <nil>
}

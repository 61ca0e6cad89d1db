package store

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func recordMutations(s *Store) *[]error {
	var got []error
	s.DetectMutations(func(err error) { got = append(got, err) })
	return &got
}

func cm(name string, labels map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: labels}, Data: map[string]string{"k": "v"}}
}

func TestMutationDetector(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(s *Store, a *corev1.ConfigMap)
		want   string // "" when nothing is to be found
	}{
		{
			name: "untouched objects replaced, deleted and checked",
			mutate: func(s *Store, a *corev1.ConfigMap) {
				require.NoError(t, put(s, cm("a", map[string]string{"app": "y"})))
			},
		},
		{
			name: "a label written, then the object replaced",
			mutate: func(s *Store, a *corev1.ConfigMap) {
				a.Labels["app"] = "changed"
				require.NoError(t, put(s, cm("a", map[string]string{"app": "y"})))
			},
			want: `ConfigMap ns/a was changed while the cache held it (metadata.labels.app: "x" -> "changed")`,
		},
		{
			name: "a data key added, then the object deleted",
			mutate: func(s *Store, a *corev1.ConfigMap) {
				a.Data["new"] = "1"
				require.NoError(t, s.Delete(Key{"ns", "a"}))
			},
			want: `ConfigMap ns/a was changed while the cache held it (data.new: (none) -> "1")`,
		},
		{
			name: "a field set, found by a check",
			mutate: func(s *Store, a *corev1.ConfigMap) {
				a.Immutable = new(bool)
				require.Error(t, s.CheckMutations())
			},
			want: `ConfigMap ns/a was changed while the cache held it (immutable: (none) -> false)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			got := recordMutations(s)
			a := cm("a", map[string]string{"app": "x"})
			require.NoError(t, put(s, a))
			require.NoError(t, put(s, cm("b", nil)))
			tt.mutate(s, a)
			require.NoError(t, s.CheckMutations(), "each change is reported once")
			if tt.want == "" {
				assert.Empty(t, *got)
				return
			}
			require.Len(t, *got, 1)
			assert.Contains(t, (*got)[0].Error(), tt.want)
			assert.Contains(t, (*got)[0].Error(), "DeepCopy before writing")
		})
	}
}

// Objects that share memory without writing into it (the decoder shares a
// stored version's maps with the next) are not mutations; a write into a
// shared map is found in every object that holds it.
func TestMutationDetectorSharedMaps(t *testing.T) {
	s := New()
	got := recordMutations(s)
	shared := map[string]string{"app": "x"}
	require.NoError(t, put(s, cm("a", shared)))
	require.NoError(t, put(s, cm("b", shared)))
	require.NoError(t, put(s, cm("a", shared))) // the next version of a, sharing its labels
	require.NoError(t, s.CheckMutations())
	assert.Empty(t, *got)

	shared["app"] = "written"
	require.Error(t, s.CheckMutations())
	require.Len(t, *got, 1)
	assert.Contains(t, (*got)[0].Error(), "ConfigMap ns/a was changed")
	assert.Contains(t, (*got)[0].Error(), "ConfigMap ns/b was changed")
}

// Semantic equality: a Quantity whose cached string was filled by a read
// (String) is not a mutation.
func TestMutationDetectorQuantityCache(t *testing.T) {
	s := New()
	got := recordMutations(s)
	q := resource.MustParse("100m")
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"},
		Spec: corev1.PodSpec{Overhead: corev1.ResourceList{corev1.ResourceCPU: resource.Quantity{}}}}
	p.Spec.Overhead[corev1.ResourceCPU] = *resource.NewMilliQuantity(q.MilliValue(), resource.DecimalSI)
	require.NoError(t, put(s, p))
	_ = p.Spec.Overhead.Cpu().String()
	require.NoError(t, s.CheckMutations())
	assert.Empty(t, *got)
}

// Without a fail func the detector panics, as client-go's does.
func TestMutationDetectorPanics(t *testing.T) {
	s := New()
	s.DetectMutations(nil)
	a := cm("a", map[string]string{"app": "x"})
	require.NoError(t, put(s, a))
	a.Labels["app"] = "y"
	assert.PanicsWithError(t, `cache: mutation detected: ConfigMap ns/a was changed while the cache held it (metadata.labels.app: "x" -> "y"); objects from event handlers, GetShared and reads with UnsafeDisableDeepCopy are the cache's own: DeepCopy before writing`,
		func() { _ = s.CheckMutations() })
}

func TestMutationDetectorFromEnv(t *testing.T) {
	for _, tt := range []struct {
		name, kubeloop, clientgo string
		want                     bool
	}{
		{"unset", "", "", false},
		{"kubeloop's", "true", "", true},
		{"client-go's", "", "true", true},
		{"false", "false", "", false},
		{"not a bool", "yes please", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(MutationDetectorEnv, tt.kubeloop)
			t.Setenv("KUBE_CACHE_MUTATION_DETECTOR", tt.clientgo)
			assert.Equal(t, tt.want, MutationDetectorFromEnv())
		})
	}
}

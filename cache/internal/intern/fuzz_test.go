package intern

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fuzz targets build Pods the way the cache gets them: decoded from
// protobuf, here from the fuzzer's bytes. A second Pod is the first with
// the second input merged in (protobuf's merge: fields set in it replace
// the first's, lists and maps grow), so that most pairs are near each
// other, as a workload's replicas and an object's updates are.

// fuzzSeeds are encodings of realistic Pods, and of patches that change
// one thing of them when merged in.
func fuzzSeeds(f *testing.F) (pods, patches [][]byte) {
	marshal := func(p *corev1.Pod) []byte {
		b, err := p.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	bare := replica("db", 1)
	bare.OwnerReferences[0].Controller = nil
	bare.Spec.Affinity, bare.Spec.Tolerations, bare.Status = nil, nil, corev1.PodStatus{}
	init := replica("job", 1)
	init.Spec.InitContainers = []corev1.Container{init.Spec.Containers[0]}
	init.Status.ContainerStatuses[0].Resources = &corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}}
	pods = [][]byte{marshal(replica("web", 1)), marshal(replica("web", 2)), marshal(bare), marshal(init), marshal(&corev1.Pod{})}
	c := func(mut func(*corev1.Container)) []byte {
		var c corev1.Container
		mut(&c)
		return marshal(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}})
	}
	point1 := resource.MustParse("0.1")
	patches = [][]byte{
		nil,
		marshal(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app.kubernetes.io/name": "other"}}}),
		marshal(&corev1.Pod{Spec: corev1.PodSpec{NodeName: "node-9", NodeSelector: map[string]string{"zone": "a"}}}),
		marshal(&corev1.Pod{Spec: corev1.PodSpec{Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}}}),
		marshal(&corev1.Pod{Spec: corev1.PodSpec{Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{}}}}),
		marshal(&corev1.Pod{Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "x", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}}}),
		c(func(c *corev1.Container) { c.Env = []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "debug"}} }),
		c(func(c *corev1.Container) { c.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: point1} }),
		c(func(c *corev1.Container) { c.LivenessProbe = &corev1.Probe{PeriodSeconds: 99} }),
		c(func(c *corev1.Container) { c.Args = []string{"--more"} }),
		marshal(&corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "sidecar"}}}}),
	}
	return pods, patches
}

// decodePods returns the Pod of a, and a's Pod with b merged in.
func decodePods(a, b []byte) (pa, pb *corev1.Pod, ok bool) {
	pa, pb = new(corev1.Pod), new(corev1.Pod)
	if pa.Unmarshal(a) != nil || pb.Unmarshal(a) != nil || pb.Unmarshal(b) != nil {
		return nil, nil, false
	}
	return pa, pb, true
}

// FuzzEquality holds equality to its doc: values that are
// reflect.DeepEqual are equal, and equal values are interchangeable:
// they encode to the same bytes (which is what sharing one for the other
// needs) and are apimachinery-semantically equal. Equal is stricter than
// reflect.DeepEqual only where its doc says (quantities of equal value
// and format; times at the same instant and location).
func FuzzEquality(f *testing.F) {
	pods, patches := fuzzSeeds(f)
	for _, p := range pods {
		for _, q := range patches {
			f.Add(p, q)
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		x, y, ok := decodePods(a, b)
		if !ok {
			return
		}
		x2, _, _ := decodePods(a, nil)
		var e equality
		if !equalValues(&e, x, x2) {
			t.Fatalf("a Pod decoded twice is not equal to itself: %#v", x)
		}
		checkEqual(t, &e, x, y)
		checkEqual(t, &e, y, x)
		// Sub-structures on their own (their eqFuncs are built, and
		// cached, apart from the Pod's).
		for i := range min(len(x.Spec.Containers), len(y.Spec.Containers)) {
			checkEqual(t, &e, &x.Spec.Containers[i], &y.Spec.Containers[i])
		}
		checkEqual(t, &e, &x.Spec.Tolerations, &y.Spec.Tolerations)
		checkEqual(t, &e, &x.Spec.Affinity, &y.Spec.Affinity)
		checkEqual(t, &e, &x.ObjectMeta, &y.ObjectMeta)
	})
}

// checkEqual compares equality's answer for a and b with reflect's and
// with their encodings.
func checkEqual[T any](t *testing.T, e *equality, a, b *T) {
	t.Helper()
	eq, deep := equalValues(e, a, b), reflect.DeepEqual(a, b)
	if deep && !eq {
		t.Fatalf("%T: reflect.DeepEqual, but not equal:\n%#v\n%#v", a, a, b)
	}
	if !eq {
		return
	}
	ea, eb := encode(t, a), encode(t, b)
	if !bytes.Equal(ea, eb) {
		t.Fatalf("%T: equal, but encoded differently:\n%#v\n%#v", a, a, b)
	}
	if !apiequality.Semantic.DeepEqual(a, b) {
		t.Fatalf("%T: equal, but not semantically:\n%#v\n%#v", a, a, b)
	}
}

// encode returns v's protobuf encoding: a wrapping Pod's for what is not
// a message itself.
func encode(t *testing.T, v any) []byte {
	t.Helper()
	var p corev1.Pod
	switch v := v.(type) {
	case marshaler:
		b := make([]byte, v.Size())
		if _, err := v.MarshalToSizedBuffer(b); err != nil {
			t.Fatal(err)
		}
		return b
	case *[]corev1.Toleration:
		p.Spec.Tolerations = *v
	case **corev1.Affinity:
		p.Spec.Affinity = *v
	default:
		t.Fatalf("cannot encode %T", v)
	}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzPodSharing transforms, as the cache does with sharing on, a Pod, an
// update of it (the second Pod, with the first as its stored version),
// and the first Pod decoded again (its template's match), and expects
// each to encode as it did before and to be semantically equal to its
// decode, after all three: nothing one's sharing did wrote into a value
// another holds. Every list two of them share has no spare capacity, so
// that an append to one copies.
func FuzzPodSharing(f *testing.F) {
	pods, patches := fuzzSeeds(f)
	for _, p := range pods {
		for _, q := range patches {
			f.Add(p, q)
		}
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, pb, ok := decodePods(a, b)
		if !ok {
			return
		}
		pa2, _, _ := decodePods(a, nil)
		want := make([][]byte, 3)
		wantObj := make([]*corev1.Pod, 3)
		for i, p := range []*corev1.Pod{pa, pb, pa2} {
			var err error
			if want[i], err = p.Marshal(); err != nil {
				return // not encodable (an invalid quantity): the cache never holds one
			}
			wantObj[i] = p.DeepCopy()
		}
		in := New()
		in.ObjectMeta(&pa.ObjectMeta, nil, true)
		in.Pod(pa, true)
		in.ObjectMeta(&pb.ObjectMeta, &pa.ObjectMeta, true)
		in.Pod(pb, true)
		in.ObjectMeta(&pa2.ObjectMeta, nil, true)
		in.Pod(pa2, true)
		for i, p := range []*corev1.Pod{pa, pb, pa2} {
			got, err := p.Marshal()
			if err != nil {
				t.Fatalf("pod %d: %v", i, err)
			}
			if !bytes.Equal(want[i], got) {
				t.Fatalf("pod %d encodes differently after sharing:\nwant %#v\ngot  %#v", i, wantObj[i], p)
			}
			if !apiequality.Semantic.DeepEqual(wantObj[i], p) {
				t.Fatalf("pod %d differs after sharing:\nwant %#v\ngot  %#v", i, wantObj[i], p)
			}
		}
		checkNoSpareCapacity(t, pa, pb, pa2)
	})
}

// checkNoSpareCapacity fails if a list that more than one of pods holds
// has capacity beyond its length.
func checkNoSpareCapacity(t *testing.T, pods ...*corev1.Pod) {
	t.Helper()
	type list struct {
		where    string
		len, cap int
		owner    int
	}
	seen := map[unsafe.Pointer]list{}
	for i, p := range pods {
		walkSlices(reflect.ValueOf(p).Elem(), fmt.Sprint("pod", i), func(where string, v reflect.Value) {
			at := v.UnsafePointer()
			l, found := seen[at]
			if !found {
				seen[at] = list{where, v.Len(), v.Cap(), i}
				return
			}
			if l.owner != i && (v.Cap() > v.Len() || l.cap > l.len) {
				t.Fatalf("%s and %s share a list with spare capacity (len %d cap %d, len %d cap %d)", l.where, where, l.len, l.cap, v.Len(), v.Cap())
			}
		})
	}
}

// walkSlices calls f with every non-empty slice reachable from v.
func walkSlices(v reflect.Value, where string, f func(string, reflect.Value)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkSlices(v.Elem(), where, f)
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[resource.Quantity]() || v.Type() == reflect.TypeFor[metav1.Time]() {
			return // no exported lists; their own memory is not shared state
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkSlices(v.Field(i), where+"."+v.Type().Field(i).Name, f)
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return
		}
		f(where, v)
		for i := range v.Len() {
			walkSlices(v.Index(i), fmt.Sprint(where, "[", i, "]"), f)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			walkSlices(it.Value(), fmt.Sprint(where, "[", it.Key(), "]"), f)
		}
	}
}

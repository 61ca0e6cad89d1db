package intern

import (
	"fmt"
	"hash/maphash"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// replica returns Pod i of workload app, as the API server would serve it:
// what its replicas repeat (resources, environment, probes, tolerations,
// the projected token volume's sources) and what they do not (name, IPs,
// the token volume's name, the container ID).
func replica(app string, i int) *corev1.Pod {
	yes := true
	exp := int64(3607)
	token := "kube-api-access-" + strconv.FormatInt(int64(i)+1<<20, 36)
	probe := func(path string) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			PeriodSeconds: 10, FailureThreshold: 3}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "team-a", Name: app + "-" + strconv.Itoa(i), GenerateName: app + "-",
			Labels:      map[string]string{"app.kubernetes.io/name": app, "pod-template-hash": "5d8f"},
			Annotations: map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-01-02T03:04:05Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app + "-5d8f",
				UID: types.UID("rs-uid-" + app), Controller: &yes}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: "registry.example.com/" + app + ":v1", Args: []string{"--port=8080", "--log=info"},
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{{Name: "LOG_LEVEL", Value: "info"},
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
				Resources: corev1.ResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
					Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
				},
				LivenessProbe: probe("/healthz"), ReadinessProbe: probe("/ready"),
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &yes, ReadOnlyRootFilesystem: &yes,
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				VolumeMounts: []corev1.VolumeMount{{Name: token, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
			}},
			Volumes: []corev1.Volume{{Name: token, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &exp, Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
				},
			}}}},
			NodeName:     "node-" + strconv.Itoa(i%3),
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 100, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname",
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": app}}},
			}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0." + strconv.Itoa(i),
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, ContainerID: fmt.Sprintf("containerd://%064x", i),
				AllocatedResources: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
		},
	}
}

// decoded returns p as the cache's decoder produces it: a protobuf round
// trip, so that no string or value is shared with p or with another call.
func decoded(t testing.TB, p *corev1.Pod) *corev1.Pod {
	t.Helper()
	b, err := p.Marshal()
	require.NoError(t, err)
	var out corev1.Pod
	require.NoError(t, out.Unmarshal(b))
	return &out
}

func mapPtr[M ~map[K]V, K comparable, V any](m M) uintptr { return reflect.ValueOf(m).Pointer() }

func slicePtr[T any](s []T) *T {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

// transform is what the cache's transform does with an object of the kind.
func transform(in *Interner, p *corev1.Pod, share bool) {
	in.ObjectMeta(&p.ObjectMeta, nil, share)
	in.Pod(p, share)
}

func TestEqualLabelsShareOneMap(t *testing.T) {
	in := New()
	meta := func(app, instance string) *metav1.ObjectMeta {
		return &metav1.ObjectMeta{
			Labels:      map[string]string{"app": strings.Clone(app), "instance": strings.Clone(instance)},
			Annotations: map[string]string{"release": strings.Clone(instance)},
		}
	}
	a, b, c := meta("web", "r1"), meta("web", "r1"), meta("web", "r2")
	for _, om := range []*metav1.ObjectMeta{a, b, c} {
		in.ObjectMeta(om, nil, true)
	}
	assert.Equal(t, mapPtr(a.Labels), mapPtr(b.Labels), "equal labels: one map")
	assert.Equal(t, mapPtr(a.Annotations), mapPtr(b.Annotations), "equal annotations: one map")
	assert.NotEqual(t, mapPtr(a.Labels), mapPtr(c.Labels), "different labels are not merged")
	assert.NotEqual(t, mapPtr(a.Annotations), mapPtr(c.Annotations), "different annotations are not merged")
	assert.Equal(t, map[string]string{"app": "web", "instance": "r1"}, b.Labels)
	assert.Equal(t, map[string]string{"app": "web", "instance": "r2"}, c.Labels)
	assert.Equal(t, map[string]string{"release": "r2"}, c.Annotations)
	assert.Same(t, unsafe.StringData(a.Labels["app"]), unsafe.StringData(c.Labels["app"]), "values interned across maps")

	// A subset or superset is not equal.
	d := &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}
	e := &metav1.ObjectMeta{Labels: map[string]string{"app": "web", "instance": "r1", "x": ""}}
	in.ObjectMeta(d, nil, true)
	in.ObjectMeta(e, nil, true)
	assert.Equal(t, map[string]string{"app": "web"}, d.Labels)
	assert.Len(t, e.Labels, 3)
	assert.NotEqual(t, mapPtr(a.Labels), mapPtr(d.Labels))
	assert.NotEqual(t, mapPtr(a.Labels), mapPtr(e.Labels))
}

func TestWithoutShareMapsAreOwn(t *testing.T) {
	in := New()
	a := &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"k": "v"}}
	b := &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"k": "v"}}
	prev := &metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}
	in.ObjectMeta(a, nil, false)
	in.ObjectMeta(b, prev, false)
	assert.NotEqual(t, mapPtr(a.Labels), mapPtr(b.Labels))
	assert.NotEqual(t, mapPtr(prev.Labels), mapPtr(b.Labels), "not even the stored version's")
	assert.NotEqual(t, mapPtr(a.Annotations), mapPtr(b.Annotations))
	assert.Same(t, unsafe.StringData(a.Labels["app"]), unsafe.StringData(b.Labels["app"]), "strings are still interned")
	assert.Zero(t, in.share.maps.len())
}

func TestUpdateTakesPreviousOrCorrectMaps(t *testing.T) {
	in := New()
	v1 := &metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}
	in.ObjectMeta(v1, nil, true)
	v2 := &metav1.ObjectMeta{Labels: map[string]string{"team": "a"}}
	in.ObjectMeta(v2, v1, true)
	assert.Equal(t, mapPtr(v1.Labels), mapPtr(v2.Labels), "unchanged labels: the stored version's map")
	v3 := &metav1.ObjectMeta{Labels: map[string]string{"team": "b"}}
	in.ObjectMeta(v3, v2, true)
	assert.Equal(t, map[string]string{"team": "b"}, v3.Labels)
	assert.Equal(t, map[string]string{"team": "a"}, v2.Labels, "the previous version is untouched")
	v4 := &metav1.ObjectMeta{}
	in.ObjectMeta(v4, v3, true)
	assert.Nil(t, v4.Labels, "removed labels stay removed")
}

func TestTablesAreBounded(t *testing.T) {
	in := New()
	// A label unique per object (a StatefulSet's pod-name, say).
	hot := map[string]string{"app": "web"}
	var first *metav1.ObjectMeta
	for i := range 5 * genSize {
		om := &metav1.ObjectMeta{Labels: map[string]string{"pod": strconv.Itoa(i)}}
		in.ObjectMeta(om, nil, true)
		require.Equal(t, strconv.Itoa(i), om.Labels["pod"])
		h := &metav1.ObjectMeta{Labels: maps2(hot)}
		in.ObjectMeta(h, nil, true)
		if first == nil {
			first = h
		}
		require.Equal(t, mapPtr(first.Labels), mapPtr(h.Labels), "a map in use stays shared (object %d)", i)
	}
	assert.LessOrEqual(t, in.share.maps.len(), 2*genSize)

	// Too large to share: a last-applied-configuration annotation.
	big := strings.Repeat("x", maxShareBytes)
	a := &metav1.ObjectMeta{Annotations: map[string]string{"last-applied": big}}
	b := &metav1.ObjectMeta{Annotations: map[string]string{"last-applied": big}}
	n := in.share.maps.len()
	in.ObjectMeta(a, nil, true)
	in.ObjectMeta(b, nil, true)
	assert.NotEqual(t, mapPtr(a.Annotations), mapPtr(b.Annotations))
	assert.Equal(t, big, b.Annotations["last-applied"])
	assert.Equal(t, n, in.share.maps.len(), "not remembered")

	// Pods unique in everything they could share.
	for i := range 3 * genSize {
		p := decoded(t, replica("app-"+strconv.Itoa(i), i))
		p.Spec.Containers[0].Args = []string{strconv.Itoa(i)}
		transform(in, p, true)
	}
	assert.LessOrEqual(t, in.share.enc.len(), 2*genSize)
	assert.LessOrEqual(t, in.share.res.len(), 2*genSize)
	assert.LessOrEqual(t, in.share.templates.len(), 2*genSize)
	assert.Greater(t, in.share.templates.len(), genSize, "the templates did fill")
}

func maps2(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.Clone(k)] = strings.Clone(v)
	}
	return out
}

func TestHashCollisionsShareNothing(t *testing.T) {
	in := New()
	s := &in.share
	m := map[string]string{"app": "web"}
	var e entries
	h, ok := s.hashStrings(m, &e)
	require.True(t, ok)
	other := map[string]string{"app": "db"}
	s.maps.put(h, other)
	got := s.stringMap(m, func() map[string]string { return maps2(m) })
	assert.Equal(t, m, got, "a different map under the same hash is not taken")
	assert.NotEqual(t, mapPtr(other), mapPtr(got))

	// The same for values shared by encoding.
	tol := []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists}}
	s.podMu.Lock()
	s.buf = append(s.buf[:0], tagTolerations)
	require.True(t, s.appendEncoding(&tol[0]))
	sg := seg{end: len(s.buf), ok: true}
	h = hashBytes(s, s.buf)
	s.enc.put(h, encoded{key: "not this one", v: []corev1.Toleration{{Key: "b"}}})
	assert.Same(t, &tol[0], slicePtr(shareSeg(s, sg, tol)))
	// And a value of another type under an equal key is not taken.
	s.enc.cur[h] = encoded{key: string(s.buf), v: "a string"}
	assert.Same(t, &tol[0], slicePtr(shareSeg(s, sg, tol)))
	s.podMu.Unlock()
}

// TestTemplateChecksEverySlot makes Pods of one controller that differ in
// one slot each and finds each with its own value there, the template's
// elsewhere.
func TestTemplateChecksEverySlot(t *testing.T) {
	in := New()
	mk := func(cpu string) *corev1.Pod {
		p := replica("web", 1)
		p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse(cpu)
		return p
	}
	// 1n and 2n have the same milli-value, which is what resource lists
	// are hashed by.
	a, b := decoded(t, mk("1n")), decoded(t, mk("2n"))
	transform(in, a, true)
	transform(in, b, true)
	assert.Equal(t, mk("1n"), a)
	assert.Equal(t, mk("2n"), b)
	assert.NotEqual(t, mapPtr(a.Spec.Containers[0].Resources.Requests), mapPtr(b.Spec.Containers[0].Resources.Requests))
	assert.Same(t, slicePtr(a.Spec.Containers[0].Env), slicePtr(b.Spec.Containers[0].Env), "the other slots are the template's")
	assert.Equal(t, 1, in.share.templates.len())

	// A slot that differs from the template is still shared with an
	// equal one of another workload.
	c := replica("web", 2)
	c.Spec.Tolerations = c.Spec.Tolerations[:1]
	d := replica("db", 1)
	d.Spec.Tolerations = d.Spec.Tolerations[:1]
	dc, dd := decoded(t, c), decoded(t, d)
	transform(in, dd, true) // db's template
	transform(in, dc, true) // web's template, but not its tolerations
	assert.Equal(t, c, dc)
	assert.Same(t, slicePtr(dd.Spec.Tolerations), slicePtr(dc.Spec.Tolerations))
	assert.NotSame(t, slicePtr(a.Spec.Tolerations), slicePtr(dc.Spec.Tolerations))
	assert.Same(t, a.Spec.Affinity, dc.Spec.Affinity)

	// A pointer slot that differs keeps its own value.
	g := replica("web", 5)
	g.Spec.Containers[0].LivenessProbe.PeriodSeconds = 30
	dg := decoded(t, g)
	transform(in, dg, true)
	assert.Equal(t, g, dg)
	assert.NotSame(t, a.Spec.Containers[0].LivenessProbe, dg.Spec.Containers[0].LivenessProbe)
	assert.Same(t, a.Spec.Containers[0].ReadinessProbe, dg.Spec.Containers[0].ReadinessProbe)

	// Another layout (a second container) is not matched with the template.
	e := replica("web", 3)
	e.Spec.Containers = append(e.Spec.Containers, e.Spec.Containers[0])
	e.Spec.Containers[1].Name = "sidecar"
	e.Spec.Containers[1].Args = []string{"--sidecar"}
	de := decoded(t, e)
	transform(in, de, true)
	assert.Equal(t, e, de)
	assert.Same(t, slicePtr(a.Spec.Containers[0].Env), slicePtr(de.Spec.Containers[1].Env))

	// A Pod without an owner is shared slot by slot and leaves no template.
	f := replica("web", 4)
	f.OwnerReferences = nil
	df := decoded(t, f)
	n := in.share.templates.len()
	transform(in, df, true)
	assert.Equal(t, f, df)
	assert.Same(t, a.Spec.Containers[0].LivenessProbe, df.Spec.Containers[0].LivenessProbe)
	assert.Equal(t, n, in.share.templates.len())
}

// TestTemplateOfAnotherOwnerIsNotTaken puts web's template where db's
// would be found and finds db's Pod with its own values.
func TestTemplateOfAnotherOwnerIsNotTaken(t *testing.T) {
	in := New()
	webPod := decoded(t, replica("web", 1))
	transform(in, webPod, true)
	require.Equal(t, 1, in.share.templates.len())
	var web *template
	for _, tp := range in.share.templates.cur {
		web = tp
	}
	in.share.templates.put(maphash.String(in.share.seed, "rs-uid-db"), web)
	db := decoded(t, replica("db", 1))
	transform(in, db, true)
	assert.Equal(t, replica("db", 1), db)
	assert.NotSame(t, webPod.Spec.Affinity, db.Spec.Affinity)
}

func TestEquality(t *testing.T) {
	var e equality
	yes, no := true, false
	base := func() *corev1.Container { return &decoded(t, replica("web", 1)).Spec.Containers[0] }
	a := base()
	assert.True(t, equalValues(&e, a, base()), "decoded twice")
	for name, change := range map[string]func(c *corev1.Container){
		"a string":                 func(c *corev1.Container) { c.Name = "other" },
		"a nested pointer's value": func(c *corev1.Container) { c.SecurityContext.RunAsNonRoot = &no },
		"a nil pointer":            func(c *corev1.Container) { c.SecurityContext.RunAsNonRoot = nil },
		"a new pointer":            func(c *corev1.Container) { c.SecurityContext.Privileged = &yes },
		"a list element":           func(c *corev1.Container) { c.Env[1].ValueFrom.FieldRef.FieldPath = "spec.nodeName" },
		"a list's length":          func(c *corev1.Container) { c.Args = c.Args[:1] },
		"nil and empty":            func(c *corev1.Container) { c.Command = []string{} },
		"an int32":                 func(c *corev1.Container) { c.Ports[0].ContainerPort = 9090 },
		"a bool":                   func(c *corev1.Container) { c.Stdin = true },
		"an IntOrString":           func(c *corev1.Container) { c.LivenessProbe.HTTPGet.Port = intstr.FromInt32(80) },
		"a quantity":               func(c *corev1.Container) { c.Resources.Limits[corev1.ResourceMemory] = resource.MustParse("1Gi") },
		"a resource name":          func(c *corev1.Container) { c.Resources.Requests = corev1.ResourceList{"x": resource.MustParse("1")} },
		"a capability":             func(c *corev1.Container) { c.SecurityContext.Capabilities.Drop[0] = "NET_RAW" },
	} {
		b := base()
		change(b)
		assert.False(t, equalValues(&e, a, b), name)
	}
	b := base()
	b.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("0.1")
	assert.True(t, equalValues(&e, a, b), "100m and 0.1 are one quantity")

	now := metav1.Now()
	later := metav1.NewTime(now.Add(time.Second))
	c1 := corev1.PodCondition{Type: "Ready", LastTransitionTime: now}
	c2 := corev1.PodCondition{Type: "Ready", LastTransitionTime: metav1.NewTime(now.Time)}
	c3 := corev1.PodCondition{Type: "Ready", LastTransitionTime: later}
	assert.True(t, equalValues(&e, &c1, &c2))
	assert.False(t, equalValues(&e, &c1, &c3))
	m1 := &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}
	m2 := &metav1.LabelSelector{MatchLabels: map[string]string{"a": "c"}}
	assert.False(t, equalValues(&e, m1, m2))
	assert.True(t, equalValues(&e, m1, &metav1.LabelSelector{MatchLabels: map[string]string{"a": "b"}}))
}

func TestResourceListsShareEqualQuantities(t *testing.T) {
	in := New()
	list := func(cpu, mem string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem)}
	}
	a := in.share.resourceList(list("100m", "1Gi"))
	for _, tc := range []struct {
		cpu, mem string
		same     bool
	}{
		{"100m", "1Gi", true},
		{"0.1", "1Gi", true},          // the same value and format: serialized "100m"
		{"100m", "1024Mi", true},      // serialized "1Gi"
		{"200m", "1Gi", false},        // another value
		{"100m", "1073741824", false}, // the same value, DecimalSI: serialized "1073741824"
	} {
		l := list(tc.cpu, tc.mem)
		got := in.share.resourceList(l)
		assert.Equal(t, tc.same, mapPtr(a) == mapPtr(got), "%s %s", tc.cpu, tc.mem)
		mem := got[corev1.ResourceMemory]
		want := l[corev1.ResourceMemory]
		assert.Equal(t, want.String(), mem.String(), "%s %s serializes as before", tc.cpu, tc.mem)
		assert.Equal(t, want.Format, mem.Format)
	}
	assert.Nil(t, in.share.resourceList(nil))
	odd := corev1.ResourceList{"example.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("1")}
	odd2 := corev1.ResourceList{"example.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("1")}
	odd3 := corev1.ResourceList{"example.com/gpu": resource.MustParse("2"), corev1.ResourceCPU: resource.MustParse("1")}
	assert.Equal(t, mapPtr(in.share.resourceList(odd)), mapPtr(in.share.resourceList(odd2)), "other names: shared")
	assert.Equal(t, mapPtr(odd3), mapPtr(in.share.resourceList(odd3)), "other names: not merged")
	assert.Equal(t, corev1.ResourceList{}, in.share.resourceList(corev1.ResourceList{}), "an empty list stays empty")
}

func TestReplicasShareSubStructures(t *testing.T) {
	in := New()
	a, b := decoded(t, replica("web", 1)), decoded(t, replica("web", 2))
	other := replica("web", 3)
	other.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("200m")
	other.Spec.Containers[0].Env[0].Value = "debug"
	other.Spec.Tolerations = other.Spec.Tolerations[:1]
	c := decoded(t, other)
	for _, p := range []*corev1.Pod{a, b, c} {
		transform(in, p, true)
	}
	for i, p := range []*corev1.Pod{a, b} {
		assert.Equal(t, replica("web", i+1), p, "values unchanged")
	}
	assert.Equal(t, other, c, "values unchanged")

	ac, bc, cc := &a.Spec.Containers[0], &b.Spec.Containers[0], &c.Spec.Containers[0]
	assert.Equal(t, mapPtr(a.Labels), mapPtr(b.Labels), "labels")
	assert.Equal(t, mapPtr(a.Spec.NodeSelector), mapPtr(b.Spec.NodeSelector), "node selector")
	assert.Equal(t, mapPtr(ac.Resources.Requests), mapPtr(bc.Resources.Requests), "requests")
	assert.Equal(t, mapPtr(ac.Resources.Limits), mapPtr(bc.Resources.Limits), "limits")
	assert.Same(t, slicePtr(ac.Env), slicePtr(bc.Env), "env")
	assert.Same(t, slicePtr(ac.Ports), slicePtr(bc.Ports), "ports")
	assert.Same(t, slicePtr(ac.Args), slicePtr(bc.Args), "args")
	assert.Same(t, ac.LivenessProbe, bc.LivenessProbe, "liveness probe")
	assert.Same(t, ac.ReadinessProbe, bc.ReadinessProbe, "readiness probe")
	assert.NotSame(t, ac.LivenessProbe, ac.ReadinessProbe, "different probes")
	assert.Same(t, ac.SecurityContext, bc.SecurityContext, "security context")
	assert.Same(t, a.Spec.Volumes[0].Projected, b.Spec.Volumes[0].Projected, "projected token volume")
	assert.Same(t, slicePtr(a.Spec.Tolerations), slicePtr(b.Spec.Tolerations), "tolerations")
	assert.Same(t, a.Spec.Affinity, b.Spec.Affinity, "affinity")
	assert.Equal(t, mapPtr(a.Status.ContainerStatuses[0].AllocatedResources), mapPtr(b.Status.ContainerStatuses[0].AllocatedResources), "allocated")
	assert.Equal(t, cap(ac.Env), len(ac.Env), "a shared slice cannot be appended to in place")

	assert.NotSame(t, slicePtr(a.Spec.Volumes), slicePtr(b.Spec.Volumes), "volumes (names differ) are the Pod's own")
	assert.NotSame(t, slicePtr(ac.VolumeMounts), slicePtr(bc.VolumeMounts), "volume mounts are the Pod's own")
	assert.NotSame(t, slicePtr(a.Spec.Containers), slicePtr(b.Spec.Containers), "containers are the Pod's own")

	assert.NotEqual(t, mapPtr(ac.Resources.Requests), mapPtr(cc.Resources.Requests), "different requests")
	assert.Equal(t, mapPtr(ac.Resources.Limits), mapPtr(cc.Resources.Limits), "equal limits of a different Pod")
	assert.NotSame(t, slicePtr(ac.Env), slicePtr(cc.Env), "different env")
	assert.NotSame(t, slicePtr(a.Spec.Tolerations), slicePtr(c.Spec.Tolerations), "different tolerations")
	assert.Same(t, ac.LivenessProbe, cc.LivenessProbe, "equal probes of a different Pod")
}

func TestWithoutSharePodsAreOwn(t *testing.T) {
	in := New()
	a, b := decoded(t, replica("web", 1)), decoded(t, replica("web", 2))
	transform(in, a, false)
	transform(in, b, false)
	assert.NotEqual(t, mapPtr(a.Spec.Containers[0].Resources.Requests), mapPtr(b.Spec.Containers[0].Resources.Requests))
	assert.NotSame(t, a.Spec.Containers[0].LivenessProbe, b.Spec.Containers[0].LivenessProbe)
	assert.NotSame(t, slicePtr(a.Spec.Tolerations), slicePtr(b.Spec.Tolerations))
	assert.NotEqual(t, mapPtr(a.Labels), mapPtr(b.Labels))
	assert.Same(t, unsafe.StringData(a.Spec.Containers[0].Image), unsafe.StringData(b.Spec.Containers[0].Image), "strings are still interned")
	assert.Zero(t, in.share.enc.len()+in.share.res.len()+in.share.maps.len()+in.share.templates.len())
}

// TestDeepCopiesAreIndependent modifies a deep copy of one replica, as a
// Get's caller may, and finds every other replica unchanged.
func TestDeepCopiesAreIndependent(t *testing.T) {
	in := New()
	pods := make([]*corev1.Pod, 3)
	for i := range pods {
		pods[i] = decoded(t, replica("web", i))
		transform(in, pods[i], true)
	}
	cp := pods[0].DeepCopy()
	cp.Labels["app.kubernetes.io/name"] = "changed"
	cp.Spec.NodeSelector["x"] = "y"
	c := &cp.Spec.Containers[0]
	c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("7")
	c.Env[0].Value = "changed"
	c.Args[0] = "changed"
	c.LivenessProbe.PeriodSeconds = 99
	*c.SecurityContext.RunAsNonRoot = false
	cp.Spec.Volumes[0].Projected.Sources[0].ServiceAccountToken.Path = "changed"
	cp.Spec.Tolerations[0].Key = "changed"
	cp.Spec.Affinity.PodAntiAffinity = nil
	for i, p := range pods {
		assert.Equal(t, replica("web", i), p, "replica %d unchanged", i)
	}
}

// TestConcurrentSharing transforms the replicas of a few workloads from
// several goroutines (one informer per namespace share a transform) while
// others read what is already shared, for the race detector.
func TestConcurrentSharing(t *testing.T) {
	in := New()
	const workers, perWorker = 4, 50
	out := make([][]*corev1.Pod, workers)
	for w := range out {
		for i := range perWorker {
			out[w] = append(out[w], decoded(t, replica("app-"+strconv.Itoa(i%3), w*perWorker+i)))
		}
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i, p := range out[w] {
				transform(in, p, true)
				if i > 0 { // read a shared value of the previous one
					prev := out[w][i-1]
					_ = prev.Spec.Containers[0].Resources.Requests.Cpu().MilliValue()
					_ = len(prev.Spec.Containers[0].Env) + len(prev.Labels)
				}
			}
		})
	}
	wg.Wait()
	for w := range out {
		for i, p := range out[w] {
			assert.Equal(t, replica("app-"+strconv.Itoa(i%3), w*perWorker+i), p)
		}
	}
}

// BenchmarkTransform decodes objects from protobuf and applies the
// interning and sharing of the cache's transform to each, as the cache
// does (mode=decode: decoding only). The transform's cost is the
// difference from mode=decode, with the object as fresh in the CPU's
// caches as it is in the cache. cpu-ns/op is the benchmark thread's own
// CPU time, which other work on a shared machine disturbs less than ns/op.
func BenchmarkTransform(b *testing.B) {
	const distinct = 1000
	pods := make([][]byte, distinct)
	cms := make([][]byte, distinct)
	for i := range distinct {
		var err error
		pods[i], err = replica("app-"+strconv.Itoa(i%50), i).Marshal()
		require.NoError(b, err)
		cms[i], err = helmConfigMap(i).Marshal()
		require.NoError(b, err)
	}
	kinds := []struct {
		name  string
		apply func(in *Interner, i int, mode string)
	}{
		{"pod", func(in *Interner, i int, mode string) {
			var p corev1.Pod
			if err := p.Unmarshal(pods[i%distinct]); err != nil {
				b.Fatal(err)
			}
			if mode != "decode" {
				transform(in, &p, mode == "share")
			}
		}},
		{"configmap", func(in *Interner, i int, mode string) {
			var cm corev1.ConfigMap
			if err := cm.Unmarshal(cms[i%distinct]); err != nil {
				b.Fatal(err)
			}
			if mode != "decode" {
				in.ObjectMeta(&cm.ObjectMeta, nil, mode == "share")
			}
		}},
	}
	for _, k := range kinds {
		for _, mode := range []string{"decode", "intern", "share"} {
			b.Run(fmt.Sprintf("kind=%s/mode=%s", k.name, mode), func(b *testing.B) {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				in := New()
				start := threadCPU(b)
				for i := 0; b.Loop(); i++ {
					k.apply(in, i, mode)
				}
				b.ReportMetric(float64((threadCPU(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// helmConfigMap returns a ConfigMap with Helm's labels and
// annotations, which repeat in a few hundred combinations.
func helmConfigMap(i int) *corev1.ConfigMap {
	ns := "namespace-" + strconv.Itoa(i%100)
	release := "release-" + strconv.Itoa(i%7)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "config-" + strconv.Itoa(i), Namespace: ns,
			Labels: map[string]string{"app.kubernetes.io/name": "app-" + strconv.Itoa(i%50), "app.kubernetes.io/managed-by": "Helm",
				"app.kubernetes.io/instance": release},
			Annotations: map[string]string{"meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": ns},
		},
		Data: map[string]string{"log-level": "info", "instance": strconv.Itoa(i)},
	}
	return cm
}

// TestHeaderDecidesSlots checks that the walk over Pods of one header
// visits the same number of slots whatever else they hold, and that Pods
// of other headers differ: a template made from one Pod fits every Pod of
// its header.
func TestHeaderDecidesSlots(t *testing.T) {
	in := New()
	count := func(p *corev1.Pod) int {
		w := &podWalk{s: &in.share, mode: keying}
		w.run(p)
		return w.slot
	}
	bigger := func() *corev1.Pod {
		p := replica("web", 2)
		p.Spec.InitContainers = p.Spec.Containers
		p.Spec.Volumes = append(p.Spec.Volumes, p.Spec.Volumes...)
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Resources: &corev1.ResourceRequirements{}})
		return p
	}
	stripped := func(p *corev1.Pod) *corev1.Pod {
		q := &corev1.Pod{}
		q.Spec.InitContainers = make([]corev1.Container, len(p.Spec.InitContainers))
		q.Spec.Containers = make([]corev1.Container, len(p.Spec.Containers))
		q.Spec.Volumes = make([]corev1.Volume, len(p.Spec.Volumes))
		q.Status.ContainerStatuses = make([]corev1.ContainerStatus, len(p.Status.ContainerStatuses))
		return q
	}
	seen := map[int][4]int{}
	for _, p := range []*corev1.Pod{{}, replica("web", 1), bigger()} {
		n := count(p)
		require.Equal(t, header(p), header(stripped(p)))
		assert.Equal(t, n, count(stripped(p)), "a Pod of the same header without any field set")
		if hdr, dup := seen[n]; dup {
			t.Errorf("headers %v and %v both have %d slots", hdr, header(p), n)
		}
		seen[n] = header(p)
	}
}

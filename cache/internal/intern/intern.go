// Package intern shares one copy of the strings many cached objects
// repeat (namespaces, label keys and values, annotation keys, owner
// references, and the strings a workload's Pods repeat), and, when
// nothing can modify the objects after it, one copy of the values they
// repeat: equal label and annotation maps, and the sub-structures of a
// workload's Pods (resources, environment, probes, tolerations, volume
// sources, ...). It cuts the cache's memory.
package intern

import (
	"maps"
	"sync"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// Interning bounds: strings longer than maxInternLen are rarely shared
// (hashes, JSON blobs), and the table stops growing at maxInterned entries
// so that high-cardinality labels cannot grow it without bound.
const (
	maxInternLen = 128
	maxInterned  = 1 << 16
)

// Interner shares one copy of the strings many cached objects repeat:
// namespaces, label keys and values, annotation keys, owner kinds; and of
// the maps and Pod sub-structures they repeat (see share.go). It lives as
// long as the cache and is safe for concurrent use.
type Interner struct {
	mu sync.RWMutex
	m  map[string]string

	share sharer
}

// New returns an empty Interner.
func New() *Interner {
	// No size hint: a hint of 256 cost each cache 18 KiB before its first
	// object, a tenth of a fleet's idle cluster (bench/multicluster
	// BenchmarkRealEngage, heap-KiB/cluster); a large cache grows it anyway.
	in := &Interner{m: map[string]string{}}
	in.share.init(func(m map[string]string) map[string]string { return in.stringMap(m, true) })
	return in
}

// String returns the shared copy of s (s itself if it is the first, too
// long, or the table is full).
func (in *Interner) String(s string) string {
	if s == "" || len(s) > maxInternLen {
		return s
	}
	in.mu.RLock()
	v, ok := in.m[s]
	in.mu.RUnlock()
	if ok {
		return v
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if v, ok := in.m[s]; ok {
		return v
	}
	if len(in.m) >= maxInterned {
		return s
	}
	in.m[s] = s
	return s
}

func (in *Interner) stringMap(m map[string]string, values bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = in.String(v)
		}
		out[in.String(k)] = v
	}
	return out
}

// metaMap returns m with its keys (and values, if values) interned: the
// stored version's map prev if equal, else with share a map shared with
// the objects whose maps are equal, else a new map.
func (in *Interner) metaMap(m, prev map[string]string, values, share bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	if !share {
		return in.stringMap(m, values)
	}
	if prev != nil && (sameMap(m, prev) || maps.Equal(m, prev)) {
		return prev
	}
	return in.share.stringMap(m, func() map[string]string { return in.stringMap(m, values) })
}

// sameMap reports whether a and b are the same map, as they are when the
// watch decoder gave an update its stored version's map (wire.Stored):
// then there is nothing to compare.
func sameMap(a, b map[string]string) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
}

// ObjectMeta interns the shared strings of om in place. With share, which
// the caller may pass only if nothing modifies om after this (no user
// transform follows), om's label and annotation maps are shared: with
// prev, the stored version of the object, when equal to its maps, else
// with any object whose maps are equal.
func (in *Interner) ObjectMeta(om, prev *metav1.ObjectMeta, share bool) {
	om.Namespace = in.String(om.Namespace)
	om.GenerateName = in.String(om.GenerateName)
	var pl, pa map[string]string
	if prev != nil {
		pl, pa = prev.Labels, prev.Annotations
	}
	om.Labels = in.metaMap(om.Labels, pl, true, share)
	om.Annotations = in.metaMap(om.Annotations, pa, false, share)
	for i := range om.OwnerReferences {
		r := &om.OwnerReferences[i]
		r.APIVersion = in.String(r.APIVersion)
		r.Kind = in.String(r.Kind)
		// The replicas of one workload share their owner.
		r.Name = in.String(r.Name)
		r.UID = types.UID(in.String(string(r.UID)))
	}
	for i, f := range om.Finalizers {
		om.Finalizers[i] = in.String(f)
	}
}

// Pod interns the strings a workload's Pods repeat: node, service account,
// scheduler, images, container names, enumerations and conditions; with
// share (see ObjectMeta) it then shares the sub-structures they repeat
// and the node selector. Pods are the largest objects most controllers
// cache.
func (in *Interner) Pod(p *corev1.Pod, share bool) {
	sp, st := &p.Spec, &p.Status
	sp.NodeName = in.String(sp.NodeName)
	sp.ServiceAccountName = in.String(sp.ServiceAccountName)
	sp.DeprecatedServiceAccount = in.String(sp.DeprecatedServiceAccount)
	sp.SchedulerName = in.String(sp.SchedulerName)
	sp.PriorityClassName = in.String(sp.PriorityClassName)
	sp.RestartPolicy = corev1.RestartPolicy(in.String(string(sp.RestartPolicy)))
	sp.DNSPolicy = corev1.DNSPolicy(in.String(string(sp.DNSPolicy)))
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Name = in.String(c.Name)
			c.Image = in.String(c.Image)
			c.ImagePullPolicy = corev1.PullPolicy(in.String(string(c.ImagePullPolicy)))
			c.TerminationMessagePath = in.String(c.TerminationMessagePath)
			c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(in.String(string(c.TerminationMessagePolicy)))
			for j := range c.Ports {
				c.Ports[j].Name = in.String(c.Ports[j].Name)
				c.Ports[j].Protocol = corev1.Protocol(in.String(string(c.Ports[j].Protocol)))
			}
			for j := range c.VolumeMounts {
				c.VolumeMounts[j].Name = in.String(c.VolumeMounts[j].Name)
				c.VolumeMounts[j].MountPath = in.String(c.VolumeMounts[j].MountPath)
			}
		}
	}
	for i := range sp.Volumes {
		sp.Volumes[i].Name = in.String(sp.Volumes[i].Name)
	}
	st.Phase = corev1.PodPhase(in.String(string(st.Phase)))
	st.QOSClass = corev1.PodQOSClass(in.String(string(st.QOSClass)))
	st.HostIP = in.String(st.HostIP)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type = corev1.PodConditionType(in.String(string(c.Type)))
		c.Status = corev1.ConditionStatus(in.String(string(c.Status)))
		c.Reason = in.String(c.Reason)
	}
	for _, cs := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range cs {
			c := &cs[i]
			c.Name = in.String(c.Name)
			c.Image = in.String(c.Image)
			c.ImageID = in.String(c.ImageID)
		}
	}
	if share {
		// After interning: sharing writes only p's own fields, and nothing
		// writes into what it shares.
		in.share.pod(p)
	}
}

// UnstructuredMeta interns namespace and labels of an unstructured object
// in place.
func (in *Interner) UnstructuredMeta(u *unstructured.Unstructured) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if ns, ok := md["namespace"].(string); ok {
		md["namespace"] = in.String(ns)
	}
	if labels, ok := md["labels"].(map[string]any); ok {
		out := make(map[string]any, len(labels))
		for k, v := range labels {
			if s, ok := v.(string); ok {
				v = in.String(s)
			}
			out[in.String(k)] = v
		}
		md["labels"] = out
	}
}

// Package intern shares one copy of the strings many cached objects
// repeat (namespaces, label keys and values, annotation keys, owner
// references, and the strings a workload's Pods repeat), to cut the
// cache's memory.
package intern

import (
	"maps"
	"sync"

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
// namespaces, label keys and values, annotation keys, owner kinds. It lives
// as long as the cache.
type Interner struct {
	mu sync.RWMutex
	m  map[string]string
}

func New() *Interner { return &Interner{m: make(map[string]string, 256)} }

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

// ObjectMeta interns the shared strings of om in place. prev, when not
// nil, is the stored version of the object: maps equal to its maps are
// replaced by them.
func (in *Interner) ObjectMeta(om, prev *metav1.ObjectMeta) {
	om.Namespace = in.String(om.Namespace)
	om.GenerateName = in.String(om.GenerateName)
	if prev != nil && len(om.Labels) > 0 && maps.Equal(om.Labels, prev.Labels) {
		om.Labels = prev.Labels
	} else {
		om.Labels = in.stringMap(om.Labels, true)
	}
	if prev != nil && len(om.Annotations) > 0 && maps.Equal(om.Annotations, prev.Annotations) {
		om.Annotations = prev.Annotations
	} else {
		om.Annotations = in.stringMap(om.Annotations, false)
	}
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
// scheduler, images, container names, enumerations and conditions. Pods are
// the largest objects most controllers cache.
func (in *Interner) Pod(p *corev1.Pod) {
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

package cache

import (
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// Interning bounds: strings longer than maxInternLen are rarely shared
// (hashes, JSON blobs), and the table stops growing at maxInterned entries
// so that high-cardinality labels cannot grow it without bound.
const (
	maxInternLen = 128
	maxInterned  = 1 << 16
)

// interner shares one copy of the strings many cached objects repeat:
// namespaces, label keys and values, annotation keys, owner kinds. It lives
// as long as the cache.
type interner struct {
	mu sync.RWMutex
	m  map[string]string
}

func newInterner() *interner { return &interner{m: make(map[string]string, 256)} }

func (in *interner) get(s string) string {
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

func (in *interner) stringMap(m map[string]string, values bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if values {
			v = in.get(v)
		}
		out[in.get(k)] = v
	}
	return out
}

// objectMeta interns the shared strings of om in place. prev, when not
// nil, is the stored version of the object: maps equal to its maps are
// replaced by them.
func (in *interner) objectMeta(om, prev *metav1.ObjectMeta) {
	om.Namespace = in.get(om.Namespace)
	om.GenerateName = in.get(om.GenerateName)
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
		r.APIVersion = in.get(r.APIVersion)
		r.Kind = in.get(r.Kind)
		// The replicas of one workload share their owner.
		r.Name = in.get(r.Name)
		r.UID = types.UID(in.get(string(r.UID)))
	}
	for i, f := range om.Finalizers {
		om.Finalizers[i] = in.get(f)
	}
}

// pod interns the strings a workload's Pods repeat: node, service account,
// scheduler, images, container names, enumerations and conditions. Pods are
// the largest objects most controllers cache.
func (in *interner) pod(p *corev1.Pod) {
	sp, st := &p.Spec, &p.Status
	sp.NodeName = in.get(sp.NodeName)
	sp.ServiceAccountName = in.get(sp.ServiceAccountName)
	sp.DeprecatedServiceAccount = in.get(sp.DeprecatedServiceAccount)
	sp.SchedulerName = in.get(sp.SchedulerName)
	sp.PriorityClassName = in.get(sp.PriorityClassName)
	sp.RestartPolicy = corev1.RestartPolicy(in.get(string(sp.RestartPolicy)))
	sp.DNSPolicy = corev1.DNSPolicy(in.get(string(sp.DNSPolicy)))
	for _, cs := range [][]corev1.Container{sp.InitContainers, sp.Containers} {
		for i := range cs {
			c := &cs[i]
			c.Name = in.get(c.Name)
			c.Image = in.get(c.Image)
			c.ImagePullPolicy = corev1.PullPolicy(in.get(string(c.ImagePullPolicy)))
			c.TerminationMessagePath = in.get(c.TerminationMessagePath)
			c.TerminationMessagePolicy = corev1.TerminationMessagePolicy(in.get(string(c.TerminationMessagePolicy)))
			for j := range c.Ports {
				c.Ports[j].Name = in.get(c.Ports[j].Name)
				c.Ports[j].Protocol = corev1.Protocol(in.get(string(c.Ports[j].Protocol)))
			}
			for j := range c.VolumeMounts {
				c.VolumeMounts[j].Name = in.get(c.VolumeMounts[j].Name)
				c.VolumeMounts[j].MountPath = in.get(c.VolumeMounts[j].MountPath)
			}
		}
	}
	for i := range sp.Volumes {
		sp.Volumes[i].Name = in.get(sp.Volumes[i].Name)
	}
	st.Phase = corev1.PodPhase(in.get(string(st.Phase)))
	st.QOSClass = corev1.PodQOSClass(in.get(string(st.QOSClass)))
	st.HostIP = in.get(st.HostIP)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type = corev1.PodConditionType(in.get(string(c.Type)))
		c.Status = corev1.ConditionStatus(in.get(string(c.Status)))
		c.Reason = in.get(c.Reason)
	}
	for _, cs := range [][]corev1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range cs {
			c := &cs[i]
			c.Name = in.get(c.Name)
			c.Image = in.get(c.Image)
			c.ImageID = in.get(c.ImageID)
		}
	}
}

// unstructuredMeta interns namespace and labels of an unstructured object
// in place.
func (in *interner) unstructuredMeta(u *unstructured.Unstructured) {
	md, ok := u.Object["metadata"].(map[string]any)
	if !ok {
		return
	}
	if ns, ok := md["namespace"].(string); ok {
		md["namespace"] = in.get(ns)
	}
	if labels, ok := md["labels"].(map[string]any); ok {
		out := make(map[string]any, len(labels))
		for k, v := range labels {
			if s, ok := v.(string); ok {
				v = in.get(s)
			}
			out[in.get(k)] = v
		}
		md["labels"] = out
	}
}

// storeTransform is the cache's transform of one kind: obj is the object
// about to be stored, prev the one stored under its key (nil if none).
type storeTransform func(obj, prev any) (any, error)

// transformFor returns the transform of key's informers: set the kind
// (decoded typed objects have an empty TypeMeta), strip managedFields
// unless kept, intern shared strings, then the user's transform. An
// update whose labels or annotations equal the stored version's takes
// that version's (already interned) maps instead of building new ones;
// only without a user transform, which might modify them in place. It is
// idempotent, as client-go requires.
func (c *InformerCache) transformFor(key kindKey, kc kindConfig) storeTransform {
	apiVersion, kind := key.gvk.ToAPIVersionAndKind()
	in := c.intern
	user := kc.transform
	keep := kc.keepManagedFields
	return func(obj, prev any) (any, error) {
		switch o := obj.(type) {
		case *unstructured.Unstructured:
			if !keep {
				if md, ok := o.Object["metadata"].(map[string]any); ok {
					delete(md, "managedFields")
				}
			}
			in.unstructuredMeta(o)
		case metav1.ObjectMetaAccessor:
			if om, ok := o.GetObjectMeta().(*metav1.ObjectMeta); ok {
				if !keep {
					om.ManagedFields = nil
				}
				var pm *metav1.ObjectMeta
				if pa, ok := prev.(metav1.ObjectMetaAccessor); ok && user == nil {
					pm, _ = pa.GetObjectMeta().(*metav1.ObjectMeta)
				}
				in.objectMeta(om, pm)
			}
			if p, ok := o.(*corev1.Pod); ok {
				in.pod(p)
			}
			setTypeMeta(o, apiVersion, kind)
		}
		if user != nil {
			return user(obj)
		}
		return obj, nil
	}
}

// setTypeMeta sets apiVersion and kind on a typed or metadata object,
// sharing the strings.
func setTypeMeta(obj any, apiVersion, kind string) {
	if o, ok := obj.(runtime.Object); ok {
		if tm, ok := o.GetObjectKind().(*metav1.TypeMeta); ok {
			tm.APIVersion, tm.Kind = apiVersion, kind
		}
	}
}

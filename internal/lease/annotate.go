package lease

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// SetAnnotation makes every later write of the Lease by this Holder (its
// creation, acquisitions and renewals; not Release) set the annotation key
// to value, or remove key when value is "". It writes nothing itself: the
// next renewal carries it, at most RetryPeriod later. Annotations this
// Holder was not told about are kept. The sharding ring publishes the view
// a shard operates under so (sharding.Ring.PublishView), one short value
// per shard, so that Lease writes do not grow with what the view covers.
func (h *Holder) SetAnnotation(key, value string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.notes == nil {
		h.notes = map[string]string{}
	}
	h.notes[key] = value
}

// annotate applies SetAnnotation's annotations to m.
func (h *Holder) annotate(m *metav1.ObjectMeta) {
	h.mu.Lock()
	notes := maps.Clone(h.notes)
	h.mu.Unlock()
	for k, v := range notes {
		switch {
		case v == "":
			delete(m.Annotations, k)
		default:
			if m.Annotations == nil {
				m.Annotations = map[string]string{}
			}
			m.Annotations[k] = v
		}
	}
}

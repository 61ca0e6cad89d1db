package wire

import (
	"encoding/binary"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The items of a list repeat a few label and annotation maps (a Helm
// release's, a workload's), and the cache's transform gives every object
// a map shared with the others that hold equal ones, dropping the maps
// the decoder built. metaCutter saves building them: it cuts the label
// and annotation entries out of an item's metadata before the item is
// decoded, and decodes each distinct run of entries once per LIST; items
// whose entries are byte for byte equal get the same map. So the items of
// one list may share label and annotation maps until the cache's
// transform replaces them by its own (interned and shared, or a fresh
// copy when a user transform follows, which might modify them): nothing
// else sees a decoded item before that transform. BenchmarkListDecode
// shows what it buys.

// Metadata fields of ObjectMeta's protobuf encoding.
const (
	fieldLabels        = 11
	fieldAnnotations   = 12
	fieldManagedFields = 17
)

// Bounds of a cutter's table: runs of entries longer than maxCutRun are
// decoded for their item alone, and the table is cleared when it holds
// maxCutRuns, so a label unique to each object cannot grow it without
// bound.
const (
	maxCutRun  = 1 << 10
	maxCutRuns = 1 << 12
)

// metaCutter cuts label and annotation entries (and, with strip,
// managedFields) out of the items of one LIST. It is not safe for
// concurrent use.
type metaCutter struct {
	strip       bool
	item        []byte // the item without what was cut
	labels      []byte // the label entries cut, tags included
	annotations []byte
	maps        map[string]map[string]string // by the entries' bytes
}

// cut returns obj's bytes without metadata's label and annotation entries
// (and managedFields with strip), and keeps the entries for setMeta. It
// returns obj itself when there is nothing to cut, and ok false when obj
// has more than one metadata field or is malformed (to be decoded as it
// is, so that the item's own decoder reports the error).
func (c *metaCutter) cut(obj []byte) (out []byte, ok bool) {
	c.labels, c.annotations = c.labels[:0], c.annotations[:0]
	at, next := -1, 0
	var meta []byte
	for i := 0; i < len(obj); {
		num, payload, n, err := field(obj, i)
		if err != nil {
			return nil, false
		}
		if num == 1 && payload != nil {
			if at >= 0 {
				return nil, false
			}
			at, next, meta = i, n, payload
		}
		i = n
	}
	if at < 0 {
		return obj, true
	}
	kept := 0
	for j := 0; j < len(meta); {
		num, _, n, err := field(meta, j)
		if err != nil {
			return nil, false
		}
		switch {
		case num == fieldLabels:
			c.labels = append(c.labels, meta[j:n]...)
		case num == fieldAnnotations:
			c.annotations = append(c.annotations, meta[j:n]...)
		case num == fieldManagedFields && c.strip:
		default:
			kept += n - j
		}
		j = n
	}
	if kept == len(meta) {
		return obj, true
	}
	b := append(c.item[:0], obj[:at]...)
	b = binary.AppendUvarint(b, 1<<3|2)
	b = binary.AppendUvarint(b, uint64(kept))
	for j := 0; j < len(meta); {
		num, _, n, _ := field(meta, j) // walked above
		if num != fieldLabels && num != fieldAnnotations && (num != fieldManagedFields || !c.strip) {
			b = append(b, meta[j:n]...)
		}
		j = n
	}
	b = append(b, obj[next:]...)
	c.item = b
	return b, true
}

// setMeta gives om the label and annotation maps of the entries the last
// cut took out.
func (c *metaCutter) setMeta(om *metav1.ObjectMeta) error {
	var err error
	if om.Labels, err = c.stringMap(c.labels, fieldLabels); err != nil {
		return err
	}
	om.Annotations, err = c.stringMap(c.annotations, fieldAnnotations)
	return err
}

// stringMap returns the map that entries (of metadata field num) decode
// to: nil for none, else the one decoded for equal entries before.
func (c *metaCutter) stringMap(entries []byte, num int) (map[string]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	if len(entries) <= maxCutRun {
		if m, ok := c.maps[string(entries)]; ok {
			return m, nil
		}
	}
	// ObjectMeta's generated decoder, so that the map is exactly what
	// decoding the whole item would have built.
	var om metav1.ObjectMeta
	if err := om.Unmarshal(entries); err != nil {
		return nil, err
	}
	m := om.Labels
	if num == fieldAnnotations {
		m = om.Annotations
	}
	if len(entries) <= maxCutRun {
		if c.maps == nil {
			c.maps = make(map[string]map[string]string)
		} else if len(c.maps) >= maxCutRuns {
			clear(c.maps)
		}
		c.maps[string(entries)] = m
	}
	return m, nil
}

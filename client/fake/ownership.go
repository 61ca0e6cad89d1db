package fake

import "reflect"

// own gives manager the field paths that differ between old and cur.
// Caller holds mu.
func (c *Client) own(id objectID, old, cur map[string]any, manager string) {
	before, after := leaves(old), leaves(cur)
	owners := c.owners[id]
	if owners == nil {
		owners = map[string]string{}
		c.owners[id] = owners
	}
	for p, v := range after {
		if w, ok := before[p]; !ok || !reflect.DeepEqual(v, w) {
			owners[p] = manager
		}
	}
	for p := range owners {
		if _, ok := after[p]; !ok {
			delete(owners, p)
		}
	}
}

const sep = "\x00"

// leaves flattens an object into field paths: maps are walked, lists and
// scalars are leaves. Server-owned metadata is left out.
func leaves(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		switch k {
		case "apiVersion", "kind":
		case "metadata":
			md, _ := v.(map[string]any)
			for mk, mv := range md {
				switch mk {
				case "labels", "annotations":
					walk(out, "metadata"+sep+mk, mv)
				case "finalizers", "ownerReferences":
					out["metadata"+sep+mk] = mv
				}
			}
		default:
			walk(out, k, v)
		}
	}
	return out
}

func walk(out map[string]any, path string, v any) {
	if m, ok := v.(map[string]any); ok && len(m) > 0 {
		for k, sub := range m {
			walk(out, path+sep+k, sub)
		}
		return
	}
	out[path] = v
}

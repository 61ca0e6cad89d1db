package fieldowner

import "strings"

// A field path joins map keys with sep.
const sep = "\x00"

// leaves flattens an object into field paths: maps are walked, lists and
// scalars (and empty maps) are leaves. Server-owned metadata is left out.
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

func isStatusPath(p string) bool { return p == "status" || strings.HasPrefix(p, "status"+sep) }

// dotted is p as the API server names fields in conflicts: ".spec.x".
func dotted(p string) string { return "." + strings.ReplaceAll(p, sep, ".") }

func setPath(m map[string]any, p string, v any) {
	parts := strings.Split(p, sep)
	for _, k := range parts[:len(parts)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[parts[len(parts)-1]] = v
}

func unsetPath(m map[string]any, p string) {
	parts := strings.Split(p, sep)
	for _, k := range parts[:len(parts)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			return
		}
		m = next
	}
	delete(m, parts[len(parts)-1])
}

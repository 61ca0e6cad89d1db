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

// setPath sets the field p of m to v. An empty map (a leaf of its own)
// set where m has a map already leaves that map as it is: it names the
// map, not its contents, which other managers may own.
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
	last := parts[len(parts)-1]
	if vm, ok := v.(map[string]any); ok && len(vm) == 0 {
		if _, isMap := m[last].(map[string]any); isMap {
			return
		}
	}
	m[last] = v
}

// hasBelow reports whether want holds a field inside p.
func hasBelow(want map[string]any, p string) bool {
	for q := range want {
		if strings.HasPrefix(q, p+sep) {
			return true
		}
	}
	return false
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

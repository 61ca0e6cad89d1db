package admission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// PatchOperation is one RFC 6902 JSON patch operation.
type PatchOperation struct {
	// Op is "add", "remove" or "replace" (CreatePatch makes no others).
	Op string `json:"op"`
	// Path is an RFC 6901 JSON pointer into the original document.
	Path string `json:"path"`
	// Value is the new value; it is not sent for "remove".
	Value any `json:"value,omitempty"`
}

// MarshalJSON writes the operation, with "value" (even a null one) for
// every operation but "remove".
func (o PatchOperation) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// CreatePatch returns the JSON patch that turns the JSON document original
// into current. Object members are visited in sorted order, so the patch is
// deterministic. Arrays are compared element by element; elements added or
// removed at the end become "add" and "remove" (from the last index down).
func CreatePatch(original, current []byte) ([]PatchOperation, error) {
	a, err := decodeJSON(original)
	if err != nil {
		return nil, fmt.Errorf("admission: original document: %w", err)
	}
	b, err := decodeJSON(current)
	if err != nil {
		return nil, fmt.Errorf("admission: current document: %w", err)
	}
	var ops []PatchOperation
	diff("", a, b, &ops)
	return ops, nil
}

// defaultingPatch returns the patch from received (the JSON the API server
// sent) to after (the defaulted object), keeping only the operations at
// paths where before (the decoded object re-encoded, before defaulting)
// and after differ. So the patch holds what the defaulter changed, and
// neither removes fields the Go type does not know nor rewrites values
// that only re-encoding changed (a quantity's canonical form, a null
// creationTimestamp).
func defaultingPatch(received, before, after []byte) ([]PatchOperation, error) {
	ops, err := CreatePatch(received, after)
	if err != nil {
		return nil, err
	}
	b, err := decodeJSON(before)
	if err != nil {
		return nil, fmt.Errorf("admission: decoded object: %w", err)
	}
	a, err := decodeJSON(after)
	if err != nil {
		return nil, fmt.Errorf("admission: defaulted object: %w", err)
	}
	ops = slices.DeleteFunc(ops, func(op PatchOperation) bool {
		bv, bok := valueAt(b, op.Path)
		av, aok := valueAt(a, op.Path)
		return bok == aok && (!bok || jsonEqual(bv, av))
	})
	if len(ops) == 0 {
		return nil, nil
	}
	return ops, nil
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON document")
	}
	return v, nil
}

func diff(path string, a, b any, ops *[]PatchOperation) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			*ops = append(*ops, PatchOperation{Op: "replace", Path: path, Value: b})
			return
		}
		for _, k := range sortedKeys(av) {
			if _, ok := bv[k]; !ok {
				*ops = append(*ops, PatchOperation{Op: "remove", Path: path + "/" + escape(k)})
			}
		}
		for _, k := range sortedKeys(bv) {
			if old, ok := av[k]; ok {
				diff(path+"/"+escape(k), old, bv[k], ops)
			} else {
				*ops = append(*ops, PatchOperation{Op: "add", Path: path + "/" + escape(k), Value: bv[k]})
			}
		}
	case []any:
		bv, ok := b.([]any)
		if !ok {
			*ops = append(*ops, PatchOperation{Op: "replace", Path: path, Value: b})
			return
		}
		n := min(len(av), len(bv))
		for i := 0; i < n; i++ {
			diff(path+"/"+strconv.Itoa(i), av[i], bv[i], ops)
		}
		for i := n; i < len(bv); i++ {
			*ops = append(*ops, PatchOperation{Op: "add", Path: path + "/" + strconv.Itoa(i), Value: bv[i]})
		}
		for i := len(av) - 1; i >= n; i-- {
			*ops = append(*ops, PatchOperation{Op: "remove", Path: path + "/" + strconv.Itoa(i)})
		}
	default:
		if !jsonEqual(a, b) {
			*ops = append(*ops, PatchOperation{Op: "replace", Path: path, Value: b})
		}
	}
}

// jsonEqual compares decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for k, x := range av {
			y, ok := bv[k]
			if !ok || !jsonEqual(x, y) {
				return false
			}
		}
		return true
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false
		}
		for i := range av {
			if !jsonEqual(av[i], bv[i]) {
				return false
			}
		}
		return true
	case json.Number:
		bv, ok := b.(json.Number)
		if !ok {
			return false
		}
		if av == bv {
			return true
		}
		x, okx := new(big.Rat).SetString(string(av))
		y, oky := new(big.Rat).SetString(string(bv))
		return okx && oky && x.Cmp(y) == 0
	default: // string, bool, nil
		return a == b
	}
}

// valueAt returns the value at an RFC 6901 pointer in a decoded document.
func valueAt(doc any, pointer string) (any, bool) {
	if pointer == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(pointer[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func escape(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

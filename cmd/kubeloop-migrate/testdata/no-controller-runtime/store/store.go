// Package store keeps objects by namespaced name. It mentions
// sigs.k8s.io/controller-runtime only in this comment and in a string, and
// imports none of it: kubeloop-migrate must leave the module alone.
package store

import (
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Origin names what this package is not.
const Origin = "not sigs.k8s.io/controller-runtime/pkg/client"

// Store is a concurrency-safe map of values by key.
type Store[V any] struct {
	mu    sync.Mutex
	items map[types.NamespacedName]V
}

// Put stores v at key.
func (s *Store[V]) Put(key types.NamespacedName, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items == nil {
		s.items = map[types.NamespacedName]V{}
	}
	s.items[key] = v
}

// Keys returns the keys in order.
func (s *Store[V]) Keys() []types.NamespacedName {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]types.NamespacedName, 0, len(s.items))
	for k := range s.items {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	return keys
}

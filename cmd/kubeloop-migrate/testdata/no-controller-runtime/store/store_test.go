package store

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestKeysInOrder(t *testing.T) {
	var s Store[int]
	s.Put(types.NamespacedName{Namespace: "b", Name: "x"}, 1)
	s.Put(types.NamespacedName{Namespace: "a", Name: "y"}, 2)
	keys := s.Keys()
	if len(keys) != 2 || keys[0].Namespace != "a" {
		t.Fatalf("keys %v", keys)
	}
}

package hashring_test

import (
	"fmt"

	"github.com/kubeloop/kubeloop/sharding/internal/hashring"
)

func ExampleNew() {
	r := hashring.New([]string{"b", "a", "b"}, 0)
	fmt.Println(r.Shards(), r.Len(), r.Has("c"))
	fmt.Println(r.Shard("/ConfigMap/default/x") == hashring.New([]string{"a", "b"}, 0).Shard("/ConfigMap/default/x"))
	fmt.Printf("%q\n", hashring.New(nil, 0).Shard("k"))
	// Output:
	// [a b] 2 false
	// true
	// ""
}

package ranges_test

import (
	"fmt"

	"github.com/kubeloop/kubeloop/sharding/internal/ranges"
)

func ExampleAssign() {
	a := ranges.Assign([]string{"shard-b", "shard-a"})
	fmt.Println(a["shard-a"].Len(), a["shard-b"].Len(), a["shard-a"].Intersect(a["shard-b"]).Empty())
	// Output: 64 63 true
}

func ExampleSelector() {
	fmt.Println(ranges.Selector("object.metadata.namespace", ranges.Set{}.With(126)))
	fmt.Println(ranges.Format(ranges.Set{}.With(126)))
	// Output:
	// shardRange(object.metadata.namespace, '0xfdfbf7efdfbf7efe', '0x10000000000000000')
	// v1/127/40000000000000000000000000000000
}

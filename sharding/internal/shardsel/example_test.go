package shardsel_test

import (
	"context"
	"fmt"

	"github.com/kubeloop/kubeloop/sharding/internal/shardsel"
)

func ExampleSelector() {
	s := shardsel.New("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
	informer := new(int) // each list-watch names itself
	_, gen, _ := s.Shard()
	s.Listing(informer, gen)
	s.Listed(informer, gen)

	gen = s.Set("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')")
	// ... the informer's watch ends, it lists again with the new selector:
	s.Listing(informer, gen)
	s.Listed(informer, gen)
	fmt.Println(gen, s.Stored(context.Background(), gen))
	// Output: 2 true
}

package multicluster_test

import (
	"fmt"
	"slices"

	"github.com/kubeloop/kubeloop/multicluster"
)

// Place is the placement every replica of a sharded fleet computes from
// the live shards and the known clusters: the same on every replica, each
// shard's share bounded by LoadFactor, and few clusters move when a shard
// joins (the third shard takes three; bounded loads move one more between
// the first two).
func ExamplePlace() {
	clusters := []string{"eu-1", "eu-2", "eu-3", "us-1", "us-2", "us-3", "ap-1", "ap-2", "ap-3"}
	two := multicluster.Place(clusters, []string{"replica-a", "replica-b"})
	three := multicluster.Place(clusters, []string{"replica-a", "replica-b", "replica-c"})
	count := func(p map[string]string) map[string]int {
		n := map[string]int{}
		for _, s := range p {
			n[s]++
		}
		return n
	}
	fmt.Println("two shards:", count(two))
	fmt.Println("three shards:", count(three))
	var moved []string
	for _, c := range clusters {
		if two[c] != three[c] {
			moved = append(moved, c+"->"+three[c])
		}
	}
	slices.Sort(moved)
	fmt.Println("moved:", moved)
	// Output:
	// two shards: map[replica-a:5 replica-b:4]
	// three shards: map[replica-a:3 replica-b:3 replica-c:3]
	// moved: [ap-1->replica-b eu-2->replica-c us-1->replica-c us-3->replica-c]
}

package membership_test

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/sharding/internal/membership"
)

// A shard counts as gone once its Lease has not changed for its duration
// by this replica's clock, from when this replica saw it change.
func ExampleObservers() {
	obs := membership.NewObservers()
	l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a_1"), LeaseDurationSeconds: ptr.To(int32(4))}}
	t0 := time.Unix(1000, 0)
	fmt.Println(obs.Expired("a", l, t0))
	fmt.Println(obs.Expired("a", l, t0.Add(3*time.Second)))
	fmt.Println(obs.Expired("a", l, t0.Add(5*time.Second)))
	fmt.Println(obs.NextExpiry(map[string]bool{"a": true}).Sub(t0))
	// Output:
	// false
	// false
	// true
	// 4s
}

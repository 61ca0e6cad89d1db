package fieldowner_test

import (
	"fmt"

	"github.com/kubeloop/kubeloop/client/fake/internal/fieldowner"
)

// Two managers apply to one object: the second may add fields, not change
// the first's.
func Example() {
	var tab fieldowner.Table[string]
	cfg := func(spec map[string]any) map[string]any { return map[string]any{"spec": spec} }

	obj, commit, _ := tab.Apply("x", nil, cfg(map[string]any{"replicas": int64(1)}), fieldowner.Request{Manager: "deployer"})
	tab.Wrote("x", nil, obj, "deployer")
	commit()

	_, _, err := tab.Apply("x", obj, cfg(map[string]any{"replicas": int64(5)}), fieldowner.Request{Manager: "scaler"})
	fmt.Println(err)
	merged, _, _ := tab.Apply("x", obj, cfg(map[string]any{"paused": true}), fieldowner.Request{Manager: "scaler"})
	fmt.Println(merged["spec"])
	// Output:
	// Apply failed with 1 conflict: conflict with "deployer": .spec.replicas
	// map[paused:true replicas:1]
}

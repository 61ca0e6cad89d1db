package sharding

import (
	"fmt"
	"maps"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/client/apiutil"
)

// ConfigureCache makes co cache, of every sharded kind, only the objects
// assigned to this shard: it adds the requirement ShardLabel()=Shard() to
// the kind's label selector (ByObject's, or DefaultLabelSelector's). It
// copies co.ByObject before changing it. It changes nothing in the ring:
// it is a question the ring answers from its options (the manager asks it
// before it builds the cache). It fails with ErrOtherRing when a
// kind is already filtered by another ring's shard label, and with
// ErrNotInScheme when a ByObject key is not in the client's scheme.
func (r *Ring) ConfigureCache(co *cache.Options) error {
	if r.ss != nil {
		return r.ss.configureCache(co)
	}
	byObject := make(map[client.Object]cache.ByObject, len(co.ByObject)+len(r.spec.Kinds))
	maps.Copy(byObject, co.ByObject)
	keyOf := map[schema.GroupVersionKind]client.Object{}
	for obj := range byObject {
		gvk, err := apiutil.GVKForObject(obj, r.spec.C.Scheme())
		if err != nil {
			return fmt.Errorf("%w: cache ByObject key %T: %w", ErrNotInScheme, obj, err)
		}
		keyOf[gvk] = obj
	}
	req, err := labels.NewRequirement(r.spec.ShardKey, selection.Equals, []string{r.spec.Shard})
	if err != nil {
		return fmt.Errorf("sharding: ring %q: selector: %w", r.spec.Ring, err)
	}
	for _, k := range r.spec.Kinds {
		key, ok := keyOf[k.GVK]
		if !ok {
			key = k.Proto
		}
		bo := byObject[key]
		sel := bo.Label
		if sel == nil {
			sel = co.DefaultLabelSelector
		}
		if sel == nil {
			sel = labels.Everything()
		}
		reqs, _ := sel.Requirements()
		for _, q := range reqs {
			if strings.HasPrefix(q.Key(), ShardLabelPrefix) && q.Key() != r.spec.ShardKey {
				return fmt.Errorf("%w: %s is cached by %s; ring %q cannot shard it too (a manager runs one ring)",
					ErrOtherRing, k.GVK.Kind, q.Key(), r.spec.Ring)
			}
		}
		bo.Label = sel.Add(*req)
		byObject[key] = bo
	}
	co.ByObject = byObject
	return nil
}

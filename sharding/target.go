package sharding

import (
	"fmt"

	"github.com/kubeloop/kubeloop/client"
)

// newTarget returns an empty object of the gate's kind to read a request's
// object into, and the reader to read it with: the cache set by
// SetCacheReader, else the ring's client.
func (g *gate) newTarget() (client.Object, client.Reader, error) {
	r := g.r
	obj, err := r.c.Scheme().New(g.k.gvk)
	if err != nil {
		return nil, nil, fmt.Errorf("sharding: ring %q: new %s: %w", r.opts.Ring, g.k.gvk.Kind, err)
	}
	reader := client.Reader(r.c)
	if b := r.reader.Load(); b != nil {
		reader = b.r
	}
	return obj.(client.Object), reader, nil
}

package source

import (
	"context"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
)

// What a CRDSource knows and how it learns it: one run's settling, and the
// group's CRDs as the CRD informer reports them. Both crd.go (the source)
// and crdfollow.go (the loop that follows the CRD) read these; nothing
// here calls into either.

// crdRun is one Start of a CRDSource, until its ctx ends and its goroutine
// returned.
type crdRun struct {
	ctx context.Context
	// settled is closed once the source knows its state after Start: the
	// kind is waiting, or it is served and its informer synced; err is set
	// before, if the CRD informer could not be had.
	settled    chan struct{}
	settleOnce sync.Once
	err        error
	done       chan struct{} // closed when the run's goroutine returned
}

func (r *crdRun) settle() { r.settleOnce.Do(func() { close(r.settled) }) }

// fail ends the run's goroutine with err, which WaitForSync returns.
func (r *crdRun) fail(err error) {
	r.settleOnce.Do(func() {
		r.err = err
		close(r.settled)
	})
}

// crdState is what the source knows of one CustomResourceDefinition from
// its metadata.
type crdState struct {
	uid         types.UID
	terminating bool
}

// observe records a CRD event: name, and whether the CRD is gone.
func (s *CRDSource) observe(obj any, gone bool) {
	if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj, gone = tomb.Obj, true
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return
	}
	s.mu.Lock()
	// A CRD's name is <plural>.<group>: the API server enforces it.
	if !strings.HasSuffix(m.GetName(), "."+s.gvk.Group) {
		s.mu.Unlock()
		return
	}
	if gone {
		delete(s.crds, m.GetName())
	} else {
		s.crds[m.GetName()] = crdState{uid: m.GetUID(), terminating: m.GetDeletionTimestamp() != nil}
	}
	s.mu.Unlock()
	select {
	case s.poke <- struct{}{}:
	default:
	}
}

// crds returns a copy of what the source knows of the group's CRDs.
func (s *CRDSource) snapshot() map[string]crdState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]crdState, len(s.crds))
	for k, v := range s.crds {
		out[k] = v
	}
	return out
}

// crdEvents hands the CRD informer's events to the source. It never blocks.
type crdEvents struct{ s *CRDSource }

var _ toolscache.ResourceEventHandler = crdEvents{}

func (e crdEvents) OnAdd(obj any, _ bool)  { e.s.observe(obj, false) }
func (e crdEvents) OnUpdate(_, newObj any) { e.s.observe(newObj, false) }
func (e crdEvents) OnDelete(obj any)       { e.s.observe(obj, true) }

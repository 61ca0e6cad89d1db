package informer

import (
	"errors"
	"fmt"
	"sync"

	toolscache "k8s.io/client-go/tools/cache"
)

// Multi fans an Informer out over one informer per namespace.
// Handlers see every namespace's events, including isInInitialList.
type Multi struct {
	informers []*Informer
	done      <-chan struct{} // closed when the informers stop
}

// AddEventHandler adds handler to every namespace's informer.
func (m *Multi) AddEventHandler(handler toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg := &multiRegistration{done: m.done}
	for _, inf := range m.informers {
		r, err := inf.AddEventHandler(handler)
		if err != nil {
			_ = m.RemoveEventHandler(reg)
			return nil, err
		}
		reg.regs = append(reg.regs, r)
	}
	return reg, nil
}

// RemoveEventHandler removes a handler added with AddEventHandler.
func (m *Multi) RemoveEventHandler(handle toolscache.ResourceEventHandlerRegistration) error {
	reg, ok := handle.(*multiRegistration)
	if !ok {
		return fmt.Errorf("cache: RemoveEventHandler: handle %T was not returned by this informer", handle)
	}
	var errs []error
	for i, r := range reg.regs {
		errs = append(errs, m.informers[i].RemoveEventHandler(r))
	}
	return errors.Join(errs...)
}

// AddIndexers adds indexers to every namespace's informer.
func (m *Multi) AddIndexers(indexers toolscache.Indexers) error {
	for _, inf := range m.informers {
		if err := inf.AddIndexers(indexers); err != nil {
			return err
		}
	}
	return nil
}

// HasSynced reports whether every namespace's informer has synced.
func (m *Multi) HasSynced() bool {
	for _, inf := range m.informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// IsStopped reports whether the informers have stopped.
func (m *Multi) IsStopped() bool {
	for _, inf := range m.informers {
		if inf.IsStopped() {
			return true
		}
	}
	return false
}

// multiRegistration is a handler registration over several informers.
type multiRegistration struct {
	regs []toolscache.ResourceEventHandlerRegistration
	done <-chan struct{}

	once   sync.Once
	synced chan struct{}
}

// HasSynced reports whether the handler has seen every namespace's
// initial list.
func (r *multiRegistration) HasSynced() bool {
	for _, reg := range r.regs {
		if !reg.HasSynced() {
			return false
		}
	}
	return true
}

// HasSyncedChecker returns a checker whose channel closes once HasSynced
// is true. The goroutine that watches ends when the informers stop.
func (r *multiRegistration) HasSyncedChecker() toolscache.DoneChecker {
	r.once.Do(func() {
		r.synced = make(chan struct{})
		go func() {
			for _, reg := range r.regs {
				select {
				case <-reg.HasSyncedChecker().Done():
				case <-r.done:
					return
				}
			}
			close(r.synced)
		}()
	})
	return r
}

// Name names the checker.
func (r *multiRegistration) Name() string { return "cache: multi-namespace handler" }

// Done closes when the handler has synced in every namespace.
func (r *multiRegistration) Done() <-chan struct{} { return r.synced }

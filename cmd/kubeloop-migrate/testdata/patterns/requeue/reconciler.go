// Package requeue has a reconciler that asks for a rate-limited requeue
// (the deprecated Result{Requeue: true}), then a timed one with a
// priority (Result{RequeueAfter, Priority}), then stops.
package requeue

import (
	"context"
	"sync"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// HighPriority is the priority of the timed requeue.
const HighPriority = 10

// Reconciler walks each request through three rounds.
type Reconciler struct {
	mu     sync.Mutex
	rounds map[string]int
}

// Rounds says how often name was reconciled.
func (r *Reconciler) Rounds(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rounds[name]
}

// Reconcile returns Requeue, then RequeueAfter with a priority, then done.
func (r *Reconciler) Reconcile(_ context.Context, req ctrl.Request) (ctrl.Result, error) {
	r.mu.Lock()
	if r.rounds == nil {
		r.rounds = map[string]int{}
	}
	r.rounds[req.Name]++
	round := r.rounds[req.Name]
	r.mu.Unlock()

	switch round {
	case 1:
		return reconcile.Result{Requeue: true}, nil
	case 2:
		p := HighPriority
		return reconcile.Result{RequeueAfter: 20 * time.Millisecond, Priority: &p}, nil
	default:
		return reconcile.Result{}, nil
	}
}

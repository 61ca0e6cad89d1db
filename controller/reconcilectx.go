package controller

import (
	"context"
	"math/rand/v2"
	"sync"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubeloop/kubeloop/reconcile"
)

// reconcileContext is the context of one reconcile: the worker's context
// with the reconcile's ID and its logger (see requestLogger), in one
// allocation. Its Value answers ReconcileIDFromContext and
// logr.FromContext itself, and builds what they return the first time
// something asks, so a reconcile that neither logs nor asks costs no more.
// The layered form, context.WithValue twice over a separately allocated ID
// and sink, cost six allocations per reconcile.
type reconcileContext struct {
	context.Context
	id     reconcileID
	sink   requestSink
	logger logr.Logger // with sink, unless the controller's logger has none

	logOnce sync.Once
	boxed   any // logger, as logr.FromContext expects it
}

// newReconcileContext returns the context of a reconcile of req under ctx
// and the logger it holds: log with the request's values, the object's
// reference under kind (For's kind; "" when unknown, see requestSink).
func newReconcileContext(ctx context.Context, log logr.Logger, kind string, req reconcile.Request) (context.Context, logr.Logger) {
	return newReconcileContextWith(ctx, log, kind, req, nil)
}

// constructed calls ctor with a copy of req: taking req's address in
// newReconcileContextWith would move it to the heap on every reconcile.
func constructed(ctor func(*reconcile.Request) logr.Logger, req reconcile.Request) logr.Logger {
	return ctor(&req)
}

// newReconcileContextWith is newReconcileContext with the controller's
// Options.LogConstructor, which, when not nil, makes the reconcile's
// logger (with "reconcileID" added) in place of log's.
func newReconcileContextWith(ctx context.Context, log logr.Logger, kind string, req reconcile.Request, ctor func(*reconcile.Request) logr.Logger) (context.Context, logr.Logger) {
	rc := &reconcileContext{Context: ctx}
	rc.logger = log
	if ctor != nil {
		rc.logger = constructed(ctor, req).WithValues("reconcileID", rc.id.value())
	} else if parent := log.GetSink(); parent != nil { // not logr.Discard()
		rc.sink = requestSink{parent: parent, kind: kind, cluster: req.Cluster, namespace: req.Namespace, name: req.Name, id: &rc.id}
		rc.logger = log.WithSink(&rc.sink)
	}
	if logrContextKey == nil {
		// logr no longer asks for its key as probeLogrKey expects: fall
		// back to its own context.
		return logr.NewContext(rc, rc.logger), rc.logger
	}
	return rc, rc.logger
}

// Value returns the reconcile ID for reconcileIDKey, the logger for logr's
// key, and the parent's value for any other key.
func (rc *reconcileContext) Value(key any) any {
	switch key {
	case reconcileIDKey{}:
		return rc.id.value()
	case logrContextKey:
		if key == nil {
			break
		}
		rc.logOnce.Do(func() { rc.boxed = rc.logger })
		return rc.boxed
	}
	return rc.Context.Value(key)
}

// logrContextKey is the key under which logr.NewContext stores a logger,
// learned once by asking logr.FromContext to look one up; nil if it did
// not ask.
var logrContextKey = probeLogrKey()

// keyProbe is a context that records the key it is asked for.
type keyProbe struct {
	context.Context
	key any
}

func (p *keyProbe) Value(key any) any {
	p.key = key
	return nil
}

func probeLogrKey() any {
	p := &keyProbe{Context: context.Background()}
	_, _ = logr.FromContext(p)
	return p.key
}

// reconcileID is the ID of a reconcile: random bits drawn and formatted as
// a UUID (version 4 layout) the first time it is asked for. It need not be
// cryptographically random, only unique enough to tell reconciles apart in
// logs, so it comes from the cheap runtime generator.
type reconcileID struct {
	once  sync.Once
	boxed any // types.UID
}

// fixedReconcileID returns an ID whose value is id, for tests.
func fixedReconcileID(id string) *reconcileID {
	r := &reconcileID{}
	r.once.Do(func() { r.boxed = types.UID(id) })
	return r
}

// value returns the ID as a types.UID in an interface, boxed once.
func (r *reconcileID) value() any {
	r.once.Do(func() { r.boxed = formatReconcileID(rand.Uint64(), rand.Uint64()) })
	return r.boxed
}

// formatReconcileID formats 128 random bits as a version 4 UUID.
func formatReconcileID(hi, lo uint64) types.UID {
	const hex = "0123456789abcdef"
	hi = hi&^(0xf<<12) | 0x4<<12 // version 4
	lo = lo&^(0x3<<62) | 0x2<<62 // variant 10
	var b [36]byte
	j := 0
	for i := range 32 {
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b[j] = '-'
			j++
		}
		var nib uint64
		if i < 16 {
			nib = hi >> (60 - 4*i) & 0xf
		} else {
			nib = lo >> (60 - 4*(i-16)) & 0xf
		}
		b[j] = hex[nib]
		j++
	}
	return types.UID(b[:])
}

// ReconcileIDFromContext returns the ID of the reconcile whose context ctx
// is, or "" outside a reconcile. The same ID is in the context's logger
// under "reconcileID".
func ReconcileIDFromContext(ctx context.Context) types.UID {
	id, _ := ctx.Value(reconcileIDKey{}).(types.UID)
	return id
}

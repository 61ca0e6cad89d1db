package recorders

import (
	"context"
	"errors"
	"sync"

	"github.com/go-logr/logr"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime"
	eventsv1client "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/events"
)

// Recorders owns one manager's events.k8s.io/v1 broadcaster, which
// exists only between Start and Stop; see the package doc.
type Recorders struct {
	scheme *runtime.Scheme
	client eventsv1client.EventsV1Interface
	logger logr.Logger

	mu          sync.Mutex
	broadcaster events.EventBroadcaster
	sink        *trackedSink
	cancel      context.CancelFunc
	recorders   map[string]events.EventRecorderLogger
}

// New returns recorders that write through cs, mapping objects to kinds
// with scheme and logging under logger's "events" name.
func New(scheme *runtime.Scheme, cs eventsv1client.EventsV1Interface, logger logr.Logger) *Recorders {
	return &Recorders{
		scheme: scheme,
		client: cs,
		logger: logger.WithName("events"),
	}
}

// Start creates the broadcaster and starts writing events to the API
// server until Stop. ctx gives the broadcaster's values; Stop ends it.
func (e *Recorders) Start(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	sink := &trackedSink{next: &events.EventSinkImpl{Interface: e.client}}
	b := events.NewBroadcaster(sink)
	ctx, cancel := context.WithCancel(logr.NewContext(ctx, e.logger))
	if err := b.StartRecordingToSinkWithContext(ctx); err != nil {
		cancel()
		b.Shutdown()
		return err
	}
	e.broadcaster, e.sink, e.cancel = b, sink, cancel
	e.recorders = make(map[string]events.EventRecorderLogger)
	return nil
}

// Stop stops the broadcaster, aborts the event writes in flight and waits
// for them, so that no request is made once it returns. Events not yet
// written are dropped. Stop without Start does nothing.
func (e *Recorders) Stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broadcaster == nil {
		return
	}
	e.broadcaster.Shutdown()
	e.cancel()
	e.sink.close()
	e.broadcaster, e.sink, e.cancel, e.recorders = nil, nil, nil, nil
}

// recorder returns the live recorder for name, or nil when the manager is
// not running.
func (e *Recorders) recorder(name string) events.EventRecorderLogger {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.broadcaster == nil {
		return nil
	}
	r, ok := e.recorders[name]
	if !ok {
		r = e.broadcaster.NewRecorder(e.scheme, name).WithLogger(e.logger)
		e.recorders[name] = r
	}
	return r
}

// For returns the recorder of events reported by the controller name: it
// forwards them to the broadcaster while it runs and drops them (logged
// at V(1)) otherwise. It may be called before Start.
func (e *Recorders) For(name string) events.EventRecorder {
	return &lazyRecorder{owner: e, name: name}
}

// lazyRecorder is the recorder For returns.
type lazyRecorder struct {
	owner *Recorders
	name  string
}

var _ events.EventRecorder = (*lazyRecorder)(nil)

// Eventf records an event about regarding while the manager runs.
func (r *lazyRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	rec := r.owner.recorder(r.name)
	if rec == nil {
		r.owner.logger.V(1).Info("manager not running; event dropped", "reportingController", r.name, "type", eventtype, "reason", reason)
		return
	}
	rec.Eventf(regarding, related, eventtype, reason, action, note, args...)
}

// errEventsStopped is what the sink answers once the manager stopped.
var errEventsStopped = errors.New("manager: stopped; event dropped") // the manager's word in logs

// trackedSink counts the writes in flight, so that stop can wait for
// them (client-go's broadcaster writes from goroutines it does not track),
// and refuses writes after close.
type trackedSink struct {
	next events.EventSink

	mu       sync.Mutex
	closed   bool
	inFlight sync.WaitGroup
}

var _ events.EventSink = (*trackedSink)(nil)

func (s *trackedSink) enter() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.inFlight.Add(1)
	return true
}

func (s *trackedSink) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.inFlight.Wait()
}

// Create creates an event.
func (s *trackedSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if !s.enter() {
		return nil, errEventsStopped
	}
	defer s.inFlight.Done()
	return s.next.Create(ctx, ev)
}

// Update updates an event.
func (s *trackedSink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	if !s.enter() {
		return nil, errEventsStopped
	}
	defer s.inFlight.Done()
	return s.next.Update(ctx, ev)
}

// Patch patches an event of a series.
func (s *trackedSink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	if !s.enter() {
		return nil, errEventsStopped
	}
	defer s.inFlight.Done()
	return s.next.Patch(ctx, ev, data)
}

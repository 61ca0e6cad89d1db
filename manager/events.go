package manager

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

// eventRecorders owns the manager's events.k8s.io/v1 broadcaster. It exists
// only between Start and the end of the shutdown, so a manager that is
// never started runs no goroutine; recorders handed out earlier forward to
// it while it runs and drop events (logging them) otherwise.
type eventRecorders struct {
	scheme *runtime.Scheme
	client eventsv1client.EventsV1Interface
	logger logr.Logger

	mu          sync.Mutex
	broadcaster events.EventBroadcaster
	sink        *trackedSink
	cancel      context.CancelFunc
	recorders   map[string]events.EventRecorderLogger
}

func newEventRecorders(scheme *runtime.Scheme, cs eventsv1client.EventsV1Interface, logger logr.Logger) *eventRecorders {
	return &eventRecorders{
		scheme: scheme,
		client: cs,
		logger: logger.WithName("events"),
	}
}

// start creates the broadcaster and starts writing events to the API
// server until stop.
func (e *eventRecorders) start(ctx context.Context) error {
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

// stop stops the broadcaster, aborts the event writes in flight and waits
// for them, so that no request is made once it returns. Events not yet
// written are dropped.
func (e *eventRecorders) stop() {
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
func (e *eventRecorders) recorder(name string) events.EventRecorderLogger {
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

// lazyRecorder is the recorder GetEventRecorder returns.
type lazyRecorder struct {
	owner *eventRecorders
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
var errEventsStopped = errors.New("manager: stopped; event dropped")

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

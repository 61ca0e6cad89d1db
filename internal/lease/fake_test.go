package lease_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// world is the true time of a test; every replica reads it through its
// own skewed clock.
type world struct {
	mu  sync.Mutex
	now time.Time
}

func newWorld() *world { return &world{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (w *world) advance(d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = w.now.Add(d)
}

func (w *world) read() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

// skewed is one replica's clock: the world's time offset by off.
type skewed struct {
	w   *world
	off time.Duration
}

func (c skewed) Now() time.Time { return c.w.read().Add(c.off) }

var _ lease.Clock = skewed{}

// memAPI is a faithful in-memory Lease API: resourceVersions, Conflict on
// a stale Update, NotFound, AlreadyExists. latency, when set, advances the
// world during each request, before the write is stored.
type memAPI struct {
	mu      sync.Mutex
	rv      int
	leases  map[string]*coordinationv1.Lease
	w       *world
	latency time.Duration
	fail    error // returned by every request while set
	// stuck, when set, holds every request until it is closed, whatever
	// the request's context (an API that does not honour it).
	stuck chan struct{}
}

func newMemAPI(w *world) *memAPI { return &memAPI{leases: map[string]*coordinationv1.Lease{}, w: w} }

var leaseGR = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}

func (m *memAPI) request() error {
	if m.stuck != nil {
		<-m.stuck
	}
	if m.w != nil && m.latency > 0 {
		m.w.advance(m.latency)
	}
	return m.fail
}

func (m *memAPI) Get(_ context.Context, namespace, name string) (*coordinationv1.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.request(); err != nil {
		return nil, err
	}
	l, ok := m.leases[namespace+"/"+name]
	if !ok {
		return nil, apierrors.NewNotFound(leaseGR, name)
	}
	return l.DeepCopy(), nil
}

func (m *memAPI) Create(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.request(); err != nil {
		return nil, err
	}
	key := l.Namespace + "/" + l.Name
	if _, ok := m.leases[key]; ok {
		return nil, apierrors.NewAlreadyExists(leaseGR, l.Name)
	}
	m.rv++
	c := l.DeepCopy()
	c.ResourceVersion = strconv.Itoa(m.rv)
	m.leases[key] = c
	return c.DeepCopy(), nil
}

func (m *memAPI) Update(_ context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.request(); err != nil {
		return nil, err
	}
	key := l.Namespace + "/" + l.Name
	cur, ok := m.leases[key]
	if !ok {
		return nil, apierrors.NewNotFound(leaseGR, l.Name)
	}
	if l.ResourceVersion != cur.ResourceVersion {
		return nil, apierrors.NewConflict(leaseGR, l.Name, errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	}
	m.rv++
	c := l.DeepCopy()
	c.ResourceVersion = strconv.Itoa(m.rv)
	m.leases[key] = c
	return c.DeepCopy(), nil
}

// put stores l as someone else wrote it.
func (m *memAPI) put(l *coordinationv1.Lease) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rv++
	c := l.DeepCopy()
	c.ResourceVersion = strconv.Itoa(m.rv)
	m.leases[l.Namespace+"/"+l.Name] = c
}

func (m *memAPI) stored(namespace, name string) *coordinationv1.Lease {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.leases[namespace+"/"+name]; ok {
		return l.DeepCopy()
	}
	return nil
}

var _ lease.API = (*memAPI)(nil)

//go:build soak

package soak_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"github.com/kubeloop/kubeloop/cache"
	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/controller"
	"github.com/kubeloop/kubeloop/controller/builder"
	"github.com/kubeloop/kubeloop/controller/controllerutil"
	"github.com/kubeloop/kubeloop/internal/faultproxy"
	"github.com/kubeloop/kubeloop/manager"
	"github.com/kubeloop/kubeloop/reconcile"
)

var (
	widgetGVK = schema.GroupVersionKind{Group: "test.kubeloop.dev", Version: "v1", Kind: "Widget"}
	widgetGVR = schema.GroupVersionResource{Group: "test.kubeloop.dev", Version: "v1", Resource: "widgets"}
)

const finalizer = "soak.kubeloop.dev/cleanup"

func newWidget() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	return u
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// operator keeps, for each Widget, a ConfigMap "<name>-cm" with
// data.size = spec.size, owned by the Widget; status.observed = spec.size;
// a finalizer deletes the ConfigMap before the Widget goes.
type operator struct {
	c          client.Client
	reconciles atomic.Int64
	errors     atomic.Int64

	mu        sync.Mutex
	freshWant int64     // the spec.size of the fresh Widget to wait for; 0: none
	freshAt   time.Time // when a reconcile first saw it
}

// sawFresh records the first reconcile of the fresh Widget at the size
// being waited for.
func (o *operator) sawFresh(size int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.freshWant > 0 && size >= o.freshWant && o.freshAt.IsZero() {
		o.freshAt = time.Now()
	}
}

// expectFresh starts waiting for the fresh Widget at size; fresh returns
// when a reconcile saw it (zero: not yet).
func (o *operator) expectFresh(size int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.freshWant, o.freshAt = size, time.Time{}
}

func (o *operator) fresh() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.freshAt
}

func (o *operator) Reconcile(ctx context.Context, req reconcile.Request) (res reconcile.Result, err error) {
	o.reconciles.Add(1)
	defer func() {
		if err != nil {
			o.errors.Add(1)
		}
	}()
	w := newWidget()
	if err := o.c.Get(ctx, req.NamespacedName, w); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: req.Namespace, Name: req.Name + "-cm"}}
	if w.GetDeletionTimestamp() != nil {
		if !slices.Contains(w.GetFinalizers(), finalizer) {
			return reconcile.Result{}, nil
		}
		if err := o.c.Delete(ctx, cm); client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		controllerutil.RemoveFinalizer(w, finalizer)
		return reconcile.Result{}, client.IgnoreNotFound(o.c.Update(ctx, w))
	}
	if controllerutil.AddFinalizer(w, finalizer) {
		if err := o.c.Update(ctx, w); err != nil {
			return reconcile.Result{}, err
		}
	}
	size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
	if req.Name == "fresh" {
		o.sawFresh(size)
	}
	if _, err := controllerutil.CreateOrUpdate(ctx, o.c, cm, func() error {
		cm.Data = map[string]string{"size": strconv.FormatInt(size, 10)}
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: widgetGVK.GroupVersion().String(), Kind: widgetGVK.Kind,
			Name: w.GetName(), UID: w.GetUID(), Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}
		return nil
	}); err != nil {
		return reconcile.Result{}, err
	}
	if observed, _, _ := unstructured.NestedInt64(w.Object, "status", "observed"); observed != size {
		if err := unstructured.SetNestedField(w.Object, size, "status", "observed"); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{}, client.IgnoreNotFound(o.c.Status().Update(ctx, w))
	}
	return reconcile.Result{}, nil
}

// record is the driver's view of one Widget: what the API server
// acknowledged last, and whether a later write had an unknown outcome.
type record struct {
	mu        sync.Mutex
	exists    bool
	size      int64
	uncertain bool
}

// driver changes Widgets at a steady rate and records every acknowledged
// change.
type driver struct {
	ns      string
	wi      dynamic.ResourceInterface
	records map[string]*record
	ok, bad atomic.Int64
}

func (d *driver) run(ctx context.Context, rate int) {
	var wg sync.WaitGroup
	const writers = 4
	per := time.Second * writers / time.Duration(rate)
	names := make([]string, 0, len(d.records))
	for n := range d.records {
		names = append(names, n)
	}
	for i := 0; i < writers; i++ {
		wg.Go(func() {
			tick := time.NewTicker(per)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				d.change(ctx, names[rand.IntN(len(names))])
			}
		})
	}
	wg.Wait()
}

func (d *driver) change(ctx context.Context, name string) {
	r := d.records[name]
	r.mu.Lock()
	defer r.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	switch {
	case !r.exists:
		w := newWidget()
		w.SetName(name)
		w.Object["spec"] = map[string]any{"size": r.size + 1}
		if _, err = d.wi.Create(ctx, w, metav1.CreateOptions{}); err == nil {
			r.exists, r.size, r.uncertain = true, r.size+1, false
		} else if apierrors.IsAlreadyExists(err) {
			return // still being finalized
		}
	case rand.IntN(20) == 0:
		if err = d.wi.Delete(ctx, name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
			r.exists, r.uncertain, err = false, false, nil
		}
	default:
		var w *unstructured.Unstructured
		if w, err = d.wi.Get(ctx, name, metav1.GetOptions{}); err == nil {
			if w.GetDeletionTimestamp() != nil {
				return
			}
			size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
			_ = unstructured.SetNestedField(w.Object, size+1, "spec", "size")
			if _, err = d.wi.Update(ctx, w, metav1.UpdateOptions{}); err == nil {
				r.size, r.uncertain = size+1, false
			} else if apierrors.IsConflict(err) {
				return
			}
		}
	}
	if err != nil {
		d.bad.Add(1)
		if !apierrors.IsNotFound(err) {
			r.uncertain = true
		}
		return
	}
	d.ok.Add(1)
}

// converged checks the operator's outputs against the server and the
// server against the driver's record; it returns the problems found.
func converged(ctx context.Context, d *driver) []string {
	list, err := d.wi.List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"list widgets: " + err.Error()}
	}
	cms, err := admin.CoreV1().ConfigMaps(d.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return []string{"list configmaps: " + err.Error()}
	}
	cmSize := map[string]string{}
	for _, cm := range cms.Items {
		if strings.HasSuffix(cm.Name, "-cm") {
			cmSize[strings.TrimSuffix(cm.Name, "-cm")] = cm.Data["size"]
		}
	}
	var problems []string
	onServer := map[string]bool{}
	for _, w := range list.Items {
		name := w.GetName()
		onServer[name] = true
		size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
		observed, _, _ := unstructured.NestedInt64(w.Object, "status", "observed")
		switch {
		case w.GetDeletionTimestamp() != nil:
			problems = append(problems, name+": still being deleted")
		case cmSize[name] != strconv.FormatInt(size, 10):
			problems = append(problems, fmt.Sprintf("%s: configmap size %q, spec %d", name, cmSize[name], size))
		case observed != size:
			problems = append(problems, fmt.Sprintf("%s: status.observed %d, spec %d", name, observed, size))
		case !slices.Contains(w.GetFinalizers(), finalizer):
			problems = append(problems, name+": no finalizer")
		}
		if r, ok := d.records[name]; ok && !r.uncertain && (!r.exists || r.size != size) {
			problems = append(problems, fmt.Sprintf("%s: server has size %d, the driver's record exists=%v size %d", name, size, r.exists, r.size))
		}
	}
	for name := range cmSize {
		if !onServer[name] && name != "probe" {
			problems = append(problems, name+": configmap of a deleted widget")
		}
	}
	for name, r := range d.records {
		if !r.uncertain && r.exists && !onServer[name] {
			problems = append(problems, name+": acknowledged but missing on the server")
		}
	}
	return problems
}

type faultResult struct {
	name       string
	lasted     time.Duration
	writable   time.Duration // fault end -> first acknowledged probe write
	recovered  time.Duration // fault end -> the operator reflected that write
	fresh      freshResult
	reconciles int64
}

// freshResult is the fresh change of a fault: written once the operator's
// Widget informer was back, then reconciled.
type freshResult struct {
	written    time.Duration // fault end -> the fresh change acknowledged
	reconciled time.Duration // acknowledged -> the first reconcile that saw it
	noList     bool          // no LIST of Widgets within 15 s: written then
	err        error
}

// freshWritten is the report's cell for when the fresh change was written.
func freshWritten(r freshResult) string {
	if r.noList {
		return r.written.Round(10*time.Millisecond).String() + " (no LIST of Widgets seen)"
	}
	return r.written.Round(10 * time.Millisecond).String()
}

// freshAfter waits until the operator's Widget informer is back after the
// fault that ended at end (it sent a LIST of Widgets: its relist, or the
// version probe of its resumed watch; at most 15 s, for a fault its watch
// survived), then changes the fresh Widget and measures how long until a
// reconcile sees the change, while the catch-up drains. It runs beside
// recoverAfter, so it reports instead of failing the test.
func freshAfter(p *faultproxy.Proxy, wi nsResource, op *operator, end time.Time) freshResult {
	ctx := context.Background()
	for time.Since(end) < 15*time.Second && p.Count(end, func(r faultproxy.Record) bool {
		return !r.Watch && strings.HasSuffix(r.Path, "/widgets")
	}) == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	noList := time.Since(end) >= 15*time.Second
	time.Sleep(100 * time.Millisecond) // the LIST's answer
	for {
		if time.Since(end) > 5*time.Minute { // hang bound
			return freshResult{err: errors.New("the API server never took the fresh write")}
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		w, err := wi.Get(cctx, "fresh", metav1.GetOptions{})
		if err == nil {
			size, _, _ := unstructured.NestedInt64(w.Object, "spec", "size")
			_ = unstructured.SetNestedField(w.Object, size+1, "spec", "size")
			op.expectFresh(size + 1)
			_, err = wi.Update(cctx, w, metav1.UpdateOptions{})
		}
		cancel()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	acked := time.Now()
	for {
		if at := op.fresh(); !at.IsZero() {
			return freshResult{written: acked.Sub(end), reconciled: max(at.Sub(acked), 0), noList: noList}
		}
		if time.Since(acked) > 10*time.Minute { // hang bound
			return freshResult{written: acked.Sub(end), err: errors.New("the fresh change was never reconciled")}
		}
		time.Sleep(time.Millisecond)
	}
}

// recoverAfter bumps the probe Widget until the server takes the write and
// waits until the operator's ConfigMap shows it.
func recoverAfter(t *testing.T, wi nsResource, end time.Time) (writable, recovered time.Duration) {
	ctx := context.Background()
	var size int64
	for {
		require.Less(t, time.Since(end), 5*time.Minute, "the API server never took the probe write") // hang bound
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		w, err := wi.Get(cctx, "probe", metav1.GetOptions{})
		if err == nil {
			size, _, _ = unstructured.NestedInt64(w.Object, "spec", "size")
			size++
			_ = unstructured.SetNestedField(w.Object, size, "spec", "size")
			_, err = wi.Update(cctx, w, metav1.UpdateOptions{})
		}
		cancel()
		if err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	writable = time.Since(end)
	want := strconv.FormatInt(size, 10)
	for {
		require.Less(t, time.Since(end), 10*time.Minute, "the operator never recovered") // hang bound
		cm, err := admin.CoreV1().ConfigMaps(wi.ns).Get(ctx, "probe-cm", metav1.GetOptions{})
		if err == nil && cm.Data["size"] == want {
			return writable, time.Since(end)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type memSnapshot struct {
	heap       uint64
	goroutines int
}

func snapshot() memSnapshot {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSnapshot{heap: ms.HeapAlloc, goroutines: runtime.NumGoroutine()}
}

func TestSoak(t *testing.T) {
	if os.Getenv("KUBELOOP_SOAK") != "1" {
		t.Fatal("the soak runs only through `make soak` (KUBELOOP_SOAK=1, -tags soak)")
	}
	objects := envInt("KUBELOOP_SOAK_OBJECTS", 300)
	rate := envInt("KUBELOOP_SOAK_RATE", 60)
	settle := time.Duration(envInt("KUBELOOP_SOAK_SETTLE_SECONDS", 20)) * time.Second
	ctx := context.Background()

	ns, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "soak-"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(restConfig)
	require.NoError(t, err)
	wi := nsResource{dyn.Resource(widgetGVR).Namespace(ns.Name), ns.Name}

	d := &driver{ns: ns.Name, wi: wi, records: map[string]*record{}}
	for i := 0; i < objects; i++ {
		d.records["w-"+strconv.Itoa(i)] = &record{}
	}
	for name := range d.records {
		d.change(ctx, name) // create
	}
	probe := newWidget()
	probe.SetName("probe")
	probe.Object["spec"] = map[string]any{"size": int64(0)}
	_, err = wi.Create(ctx, probe, metav1.CreateOptions{})
	require.NoError(t, err)
	fresh := newWidget()
	fresh.SetName("fresh")
	fresh.Object["spec"] = map[string]any{"size": int64(0)}
	_, err = wi.Create(ctx, fresh, metav1.CreateOptions{})
	require.NoError(t, err)

	p, err := faultproxy.New(restConfig)
	require.NoError(t, err)
	defer p.Close()
	mgr, err := manager.New(p.Config(), manager.Options{
		Logger:                  logr.Discard(),
		Cache:                   cache.Options{DefaultNamespaces: map[string]cache.Config{ns.Name: {}}},
		GracefulShutdownTimeout: 30 * time.Second,
	})
	require.NoError(t, err)
	op := &operator{c: mgr.GetClient()}
	require.NoError(t, builder.ControllerManagedBy(mgr).For(newWidget()).Owns(&corev1.ConfigMap{}).Named("soak").
		WithOptions(controller.Options{MaxConcurrentReconciles: 4}).Complete(op))

	before := snapshot()
	mctx, stopMgr := context.WithCancel(ctx)
	mgrDone := make(chan error, 1)
	go func() { mgrDone <- mgr.Start(mctx) }()
	defer func() {
		stopMgr()
		select {
		case err := <-mgrDone:
			if err != nil {
				t.Errorf("manager: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("the manager did not stop")
		}
	}()

	start := time.Now()
	_, initial := recoverAfter(t, wi, start)
	t.Logf("initial sync and first reconcile of the probe: %s", initial)

	dctx, stopDriver := context.WithCancel(ctx)
	driverDone := make(chan struct{})
	go func() { defer close(driverDone); d.run(dctx, rate) }()
	time.Sleep(settle)
	loaded := snapshot()

	etcdPID, _ := testEnv.PIDs()
	faults := []struct {
		name string
		do   func() (end time.Time)
	}{
		{"connection cut 1 s (RST)", cut(p, faultproxy.ResetConnections, time.Second)},
		{"connection cut 5 s (RST)", cut(p, faultproxy.ResetConnections, 5*time.Second)},
		{"connection cut 20 s (RST)", cut(p, faultproxy.ResetConnections, 20*time.Second)},
		{"accept-then-close 5 s (FIN)", cut(p, faultproxy.CloseConnections, 5*time.Second)},
		{"API server restart (5 s down)", func() time.Time {
			require.NoError(t, testEnv.StopAPIServer())
			time.Sleep(5 * time.Second)
			require.NoError(t, testEnv.StartAPIServer())
			return time.Now()
		}},
		{"etcd paused 5 s (SIGSTOP)", func() time.Time {
			require.Positive(t, etcdPID, "etcd's pid")
			require.NoError(t, syscall.Kill(etcdPID, syscall.SIGSTOP))
			time.Sleep(5 * time.Second)
			require.NoError(t, syscall.Kill(etcdPID, syscall.SIGCONT))
			return time.Now()
		}},
	}
	var results []faultResult
	for _, f := range faults {
		n0 := op.reconciles.Load()
		begin := time.Now()
		end := f.do()
		freshDone := make(chan freshResult, 1)
		go func() { freshDone <- freshAfter(p, wi, op, end) }()
		writable, recovered := recoverAfter(t, wi, end)
		fr := <-freshDone
		require.NoError(t, fr.err, f.name)
		results = append(results, faultResult{name: f.name, lasted: end.Sub(begin), writable: writable, recovered: recovered, fresh: fr})
		t.Logf("%s: server writable after %s, operator recovered after %s; a fresh change written after %s was reconciled %s after its write",
			f.name, writable, recovered, fr.written, fr.reconciled)
		time.Sleep(settle)
		results[len(results)-1].reconciles = op.reconciles.Load() - n0
	}
	stopDriver()
	<-driverDone

	convergeBegin := time.Now()
	var problems []string
	for {
		if problems = converged(ctx, d); len(problems) == 0 {
			break
		}
		if time.Since(convergeBegin) > 5*time.Minute { // hang bound
			break
		}
		time.Sleep(time.Second)
	}
	convergedAfter := time.Since(convergeBegin)
	after := snapshot()

	var rep strings.Builder
	fmt.Fprintf(&rep, "# kubeloop soak report\n\n")
	fmt.Fprintf(&rep, "%d Widgets (each with an owned ConfigMap and a finalizer), 4 workers, driver at %d changes/s (%d acknowledged, %d failed), %s of load after each fault; total %s.\n\n",
		objects, rate, d.ok.Load(), d.bad.Load(), settle, time.Since(start).Round(time.Second))
	fmt.Fprintf(&rep, "| fault | lasted | server writable after | operator recovered after | fresh change written after | fresh change latency | reconciles until the next fault |\n|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(&rep, "| %s | %s | %s | %s | %s | %s | %d |\n", r.name, r.lasted.Round(10*time.Millisecond),
			r.writable.Round(10*time.Millisecond), r.recovered.Round(10*time.Millisecond),
			freshWritten(r.fresh), r.fresh.reconciled.Round(time.Millisecond), r.reconciles)
	}
	fmt.Fprintf(&rep, "\nRecovered = from the end of the fault until a write made after it (to the probe Widget) is in its ConfigMap. "+
		"The probe is written as soon as the server takes writes, usually before the operator's informer is back, so it is part of the catch-up (queued at low priority).\n"+
		"Fresh change = a write to another Widget made once the operator's informer is back (it sent a LIST of Widgets: its relist, or the version probe of its resumed watch); "+
		"its latency runs from the write's acknowledgement to the first reconcile that sees it, while the catch-up drains (target: under 1 s).\n\n")
	fmt.Fprintf(&rep, "| | heap (after GC) | goroutines |\n|---|---|---|\n")
	for _, s := range []struct {
		name string
		m    memSnapshot
	}{{"start (before the manager)", before}, {"loaded, before the faults", loaded}, {"end", after}} {
		fmt.Fprintf(&rep, "| %s | %.1f MiB | %d |\n", s.name, float64(s.m.heap)/(1<<20), s.m.goroutines)
	}
	fmt.Fprintf(&rep, "\nReconciles: %d (%d returned an error). Converged %s after the driver stopped: %d problems.\n",
		op.reconciles.Load(), op.errors.Load(), convergedAfter.Round(10*time.Millisecond), len(problems))
	for i, pr := range problems {
		if i == 20 {
			fmt.Fprintf(&rep, "- ... %d more\n", len(problems)-20)
			break
		}
		fmt.Fprintf(&rep, "- %s\n", pr)
	}
	fmt.Println(rep.String())
	if path := os.Getenv("KUBELOOP_SOAK_REPORT"); path != "" {
		require.NoError(t, os.WriteFile(path, []byte(rep.String()), 0o644))
	}
	require.Empty(t, problems, "the operator converged to the driver's record")
}

// cut returns a fault that makes the proxy treat every connection as mode
// says for d.
func cut(p *faultproxy.Proxy, mode faultproxy.RejectMode, d time.Duration) func() time.Time {
	return func() time.Time {
		p.Reject(mode)
		time.Sleep(d)
		p.Reject(faultproxy.Pass)
		return time.Now()
	}
}

// nsResource is a namespaced dynamic resource that remembers its
// namespace.
type nsResource struct {
	dynamic.ResourceInterface
	ns string
}

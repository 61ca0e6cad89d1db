package real_bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubeloop/kubeloop/bench/internal/profiling"
	"github.com/kubeloop/kubeloop/bench/internal/stacks"
)

const childEnv = "KUBELOOP_REAL_CHILD"

// result is what a child reports on its RESULT line.
type result struct {
	ColdSeconds, ColdCPUSeconds float64
	PeakRSSMiB                  float64
	SteadyCPUMicrosPerEvent     float64
	EventsPerSecond             float64
	P50Micros, P99Micros        float64
	WriteMicros                 float64
}

// BenchmarkRealE2E runs each stack once per iteration in a fresh child
// process against the shared control plane. Run it with -benchtime 1x.
func BenchmarkRealE2E(b *testing.B) {
	names := slices.Clone(stacks.Names)
	if *floor {
		names = append(names, "floor")
	}
	if *reverse {
		slices.Reverse(names)
	}
	for _, name := range names {
		b.Run("impl="+name, func(b *testing.B) {
			var rs []result
			for b.Loop() {
				rs = append(rs, runStack(b, name))
			}
			avg := func(f func(result) float64) float64 {
				var s float64
				for _, r := range rs {
					s += f(r)
				}
				return s / float64(len(rs))
			}
			b.ReportMetric(avg(func(r result) float64 { return r.ColdSeconds }), "s/coldstart")
			b.ReportMetric(avg(func(r result) float64 { return r.ColdCPUSeconds }), "cpu-s/coldstart")
			b.ReportMetric(avg(func(r result) float64 { return r.PeakRSSMiB }), "peak-RSS-MiB")
			b.ReportMetric(avg(func(r result) float64 { return r.SteadyCPUMicrosPerEvent }), "cpu-us/event")
			b.ReportMetric(avg(func(r result) float64 { return r.EventsPerSecond }), "events/s")
			b.ReportMetric(avg(func(r result) float64 { return r.P50Micros }), "p50-us")
			b.ReportMetric(avg(func(r result) float64 { return r.P99Micros }), "p99-us")
			b.ReportMetric(avg(func(r result) float64 { return r.WriteMicros }), "write-us")
		})
	}
}

// runStack starts the child, fires the steady-state patches when the child
// says STEADY, and returns its RESULT.
func runStack(b *testing.B, name string) result {
	b.StopTimer()
	defer b.StartTimer()
	base := gen
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(),
		childEnv+"="+name,
		"KUBELOOP_REAL_CONN="+cfgPath,
		fmt.Sprintf("KUBELOOP_REAL_ARGS=%d,%d,%d,%d,%d,%d", *nObjects, *nEvents, *nEventObjects, *nLatency, *workers, base),
	)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// The child writes gens base+1 .. base+events+latency.
	gen = base + int64(*nEvents+*nLatency) + 1
	var r result
	var got bool
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "STEADY":
			if err := fire(base, *nEvents, *nEventObjects, *writers); err != nil {
				_ = cmd.Process.Kill()
				b.Fatalf("%s: steady-state patches: %v", name, err)
			}
		case strings.HasPrefix(line, "RESULT "):
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "RESULT ")), &r); err != nil {
				b.Fatalf("%s: bad result %q: %v", name, line, err)
			}
			got = true
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil || !got {
		b.Fatalf("%s: child failed: %v", name, err)
	}
	return r
}

// fire sends events patches: patch k sets data["gen"] = base+1+k on
// config-<k % objects>. Each writer owns the objects w, w+writers, ... so
// the patches of one object are sent in order.
func fire(base int64, events, objects, writers int) error {
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for k := 0; k < events; k++ {
				if (k%objects)%writers != w {
					continue
				}
				if err := patchGen(ctx, clientset, k%objects, base+1+int64(k)); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

func patchGen(ctx context.Context, cs kubernetes.Interface, i int, g int64) error {
	body := fmt.Appendf(nil, `{"data":{"gen":"%d"}}`, g)
	_, err := cs.CoreV1().ConfigMaps(namespace).Patch(ctx, fmt.Sprintf("config-%d", i), types.MergePatchType, body, metav1.PatchOptions{})
	return err
}

// runChild is the child's main: run one stack through the three phases
// and print RESULT <json>.
func runChild() int {
	name := os.Getenv(childEnv)
	ctrllog.SetLogger(logr.Discard())
	var n, events, eventObjects, latency, workers int
	var base int64
	if _, err := fmt.Sscanf(os.Getenv("KUBELOOP_REAL_ARGS"), "%d,%d,%d,%d,%d,%d", &n, &events, &eventObjects, &latency, &workers, &base); err != nil {
		fmt.Fprintln(os.Stderr, "bad KUBELOOP_REAL_ARGS:", err)
		return 2
	}
	js, err := os.ReadFile(os.Getenv("KUBELOOP_REAL_CONN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var conn connInfo
	if err := json.Unmarshal(js, &conn); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	r, err := child(name, conn, n, events, eventObjects, latency, workers, base)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		return 1
	}
	out, _ := json.Marshal(r)
	fmt.Printf("RESULT %s\n", out)
	return 0
}

func child(name string, conn connInfo, n, events, eventObjects, latency, workers int, base int64) (result, error) {
	var r result
	st, ok := stacks.Lookup(name)
	if !ok {
		return r, fmt.Errorf("unknown stack %q", name)
	}
	rec := newRecorder(n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)

	// Cold start: the objects exist already.
	cold := rec.phaseAll()
	cpu0, t0 := stacks.CPUSeconds(), time.Now()
	go func() {
		errc <- st(ctx, conn.config(), workers, func(cm *corev1.ConfigMap) { rec.observe(cm.Namespace, cm.Name, cm.Data["gen"]) })
	}()
	select {
	case <-cold:
	case err := <-errc:
		return r, fmt.Errorf("stack stopped during cold start: %v", err)
	case <-time.After(5 * time.Minute):
		return r, fmt.Errorf("cold start: %d objects left after 5 minutes", rec.remaining.Load())
	}
	r.ColdSeconds, r.ColdCPUSeconds = time.Since(t0).Seconds(), stacks.CPUSeconds()-cpu0
	r.PeakRSSMiB = stacks.PeakRSSMiB()

	// Steady state: the parent patches; this process only reconciles.
	if events > 0 {
		goals := make(map[int]int64, eventObjects)
		for k := range events { // the last patch of each object wins
			goals[k%eventObjects] = base + 1 + int64(k) + 1
		}
		done := rec.phase(goals)
		time.Sleep(200 * time.Millisecond)
		rec.reconciles.Store(0)
		stopProfile := startProfile("steady." + name)
		cpu0, t0 := stacks.CPUSeconds(), time.Now()
		fmt.Println("STEADY")
		select {
		case <-done:
		case err := <-errc:
			return r, fmt.Errorf("stack stopped during steady state: %v", err)
		case <-time.After(5 * time.Minute):
			return r, fmt.Errorf("steady state: %d objects left after 5 minutes", rec.remaining.Load())
		}
		secs := time.Since(t0).Seconds()
		r.SteadyCPUMicrosPerEvent = (stacks.CPUSeconds() - cpu0) * 1e6 / float64(events)
		stopProfile()
		r.EventsPerSecond = float64(events) / secs
	}

	// Latency: this process patches one object at a time.
	if latency > 0 {
		cs, err := kubernetes.NewForConfig(conn.config())
		if err != nil {
			return r, err
		}
		lat := make([]float64, 0, latency)
		writes := make([]float64, 0, latency)
		for j := range latency {
			time.Sleep(2 * time.Millisecond)
			g := base + 1 + int64(events) + int64(j)
			done := rec.phase(map[int]int64{j: g + 1})
			t := time.Now()
			if err := patchGen(ctx, cs, j, g); err != nil {
				return r, err
			}
			writes = append(writes, float64(time.Since(t).Microseconds()))
			select {
			case <-done:
			case <-time.After(time.Minute):
				return r, fmt.Errorf("latency: patch %d not reconciled after a minute", j)
			}
			lat = append(lat, float64(time.Since(t).Microseconds()))
		}
		slices.Sort(lat)
		slices.Sort(writes)
		r.P50Micros, r.P99Micros = lat[len(lat)/2], lat[len(lat)*99/100]
		r.WriteMicros = writes[len(writes)/2]
	}
	return r, nil
}

// startProfile writes a CPU profile of a phase to
// $KUBELOOP_REAL_CPUPROFILE.<phase>.<stack> when that variable is set, at
// $KUBELOOP_REAL_PROFILE_HZ samples a second if set.
func startProfile(name string) (stop func()) {
	hz, _ := strconv.Atoi(os.Getenv("KUBELOOP_REAL_PROFILE_HZ"))
	return profiling.CPU(os.Getenv("KUBELOOP_REAL_CPUPROFILE"), name, hz)
}

// Command recovery measures how fast a sharded operator recovers from a
// killed replica, with every replica a separate OS process (this program
// run again as a replica of examples/sharded) against one real control
// plane (kubeloop's envtest; `make tools` builds it), and a witness
// outside the replicas: the reconcile log each replica appends to its own
// file, and a watch of the sharded objects from this process.
//
// Scenarios (each run on a fresh control plane):
//   - kill: 3 replicas, -objects ConfigMaps, kill -9 of a replica that
//     does not run the sharder; measured until every object it owned has
//     been reconciled by a survivor.
//   - kill-sharder: the same with the replica that runs the sharder.
//   - scaleout: a 4th replica joins, and the sharder's replica is killed
//     -9 once the first drain is under way; measured until every object
//     is assigned, not draining, to the live shard the ring over the
//     survivors puts it on.
//
// Every run also checks the witness: no object reconciled by two
// replicas at once (a killed replica's last reconcile lasts until the
// kill). The phases of each recovery (Lease expiry judged by the
// survivors, the sharder elected, the sweeps, the labels patched, the
// survivors' caches, the first and last reconcile) are printed per run;
// a kill run also says where its time went (breakdown.go: kill -> Lease
// expiry observed -> relabelled -> in the survivors' caches -> all
// reconciled, and per survivor the moved objects, the median of their
// first reconciles from the witness, the serial floor, and the worker's
// span split into first reconciles, repeats, others and idle); the
// targets with met / not met, and a line per kill run, come at the end:
//
//	go run ./sharding/cmd/recovery -runs 3            # from bench/
//	go run ./sharding/cmd/recovery -scenarios scaleout -runs 5
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/kubeloop/kubeloop/examples/sharded"
)

// replicaEnv carries a replicaSpec as JSON: the program then runs as that
// replica.
const replicaEnv = "KUBELOOP_RECOVERY_REPLICA"

// replicaSpec is one replica's options and its log file.
type replicaSpec struct {
	Options sharded.ReplicaOptions
	Log     string
}

type config struct {
	objects   int
	lease     time.Duration
	work      time.Duration
	workers   int
	runs      int
	scenarios []string
	keep      bool
	pprof     bool
}

func main() {
	if spec := os.Getenv(replicaEnv); spec != "" {
		os.Exit(runReplica(spec))
	}
	var cfg config
	var scen string
	flag.IntVar(&cfg.objects, "objects", 2000, "ConfigMaps")
	flag.DurationVar(&cfg.lease, "lease", 4*time.Second, "LeaseDuration (RenewDeadline 2/3 and RetryPeriod 1/5 of it)")
	flag.DurationVar(&cfg.work, "work", 5*time.Millisecond, "time each reconcile waits")
	flag.IntVar(&cfg.workers, "workers", 1, "reconcile workers per replica")
	flag.IntVar(&cfg.runs, "runs", 3, "runs of each scenario")
	flag.StringVar(&scen, "scenarios", "kill,kill-sharder,scaleout", "scenarios to run, comma-separated")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the replicas' logs and witnesses (printed at the end)")
	flag.BoolVar(&cfg.pprof, "pprof", false, "serve pprof in each replica (its address is in the run's log)")
	flag.Parse()
	cfg.scenarios = strings.Split(scen, ",")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results, err := runAll(ctx, cfg)
	report(cfg, results)
	if err != nil {
		fmt.Fprintln(os.Stderr, "recovery:", err)
		os.Exit(1)
	}
}

// runReplica runs one replica with a JSON log (millisecond times, V(1)
// lines included) in its log file.
func runReplica(js string) int {
	var spec replicaSpec
	if err := json.Unmarshal([]byte(js), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	f, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	defer f.Close()
	slog.SetDefault(slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.Level(-1)})))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := sharded.RunReplica(ctx, spec.Options); err != nil {
		slog.Error("replica stopped", "err", err)
		return 1
	}
	return 0
}

func runAll(ctx context.Context, cfg config) (map[string][]*result, error) {
	out := map[string][]*result{}
	for _, s := range cfg.scenarios {
		if _, ok := scenarios[s]; !ok {
			return out, fmt.Errorf("unknown scenario %q", s)
		}
	}
	for i := range cfg.runs {
		for _, s := range cfg.scenarios {
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			fmt.Printf("== %s, run %d of %d (load average %s)\n", s, i+1, cfg.runs, loadavg())
			res, err := runOne(ctx, cfg, s)
			if res != nil {
				res.print()
				out[s] = append(out[s], res)
			}
			if err != nil {
				return out, fmt.Errorf("%s run %d: %w", s, i+1, err)
			}
		}
	}
	return out, nil
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// report prints each scenario's measure over the runs and its target.
func report(cfg config, results map[string][]*result) {
	target := cfg.lease + 3*time.Second
	fmt.Printf("\n== targets (LeaseDuration %s + 3 s = %s; %d objects, 3 replicas, work %s, %d worker(s) per replica)\n",
		cfg.lease, target, cfg.objects, cfg.work, cfg.workers)
	fmt.Printf("%-13s %-66s %-18s %-18s %-8s %s\n", "scenario", "measure", "runs (s)", "placed (s)", "overlaps", "met")
	for _, s := range cfg.scenarios {
		rs := results[s]
		if len(rs) == 0 {
			continue
		}
		var ds []float64
		var runs, placed []string
		overlaps := 0
		met := true
		for _, r := range rs {
			ds = append(ds, r.recovered.Seconds())
			runs = append(runs, fmt.Sprintf("%.1f", r.recovered.Seconds()))
			placed = append(placed, fmt.Sprintf("%.1f", r.placed.Seconds()))
			overlaps += r.overlaps
			if r.recovered <= 0 || r.recovered > target || r.overlaps > 0 {
				met = false
			}
		}
		sort.Float64s(ds)
		verdict := "met"
		if !met {
			verdict = "not met"
		}
		fmt.Printf("%-13s %-66s %-18s %-18s %-8d %s (max %.1f s, median %.1f s)\n", s, scenarios[s].measure,
			strings.Join(runs, " "), strings.Join(placed, " "), overlaps, verdict, ds[len(ds)-1], ds[len(ds)/2])
	}
	// Where the time of each kill run went (breakdown.go): the stages from
	// the kill, and the survivor with the largest serial floor.
	for _, s := range cfg.scenarios {
		for i, r := range results[s] {
			if r.stages == "" {
				continue
			}
			var worst survivorWork
			for _, w := range r.work {
				if w.span() > worst.span() {
					worst = w
				}
			}
			fmt.Printf("%-13s run %d: recovered %.2f s: %s; slowest survivor %s: %d moved x median first reconcile %.1f ms = floor %.2f s, span %.2f s (%d repeats %.2f s, %d others %.2f s, idle %.2f s)\n",
				s, i+1, r.recovered.Seconds(), r.stages, worst.shard, worst.moved, ms(worst.median), worst.floor().Seconds(), worst.span().Seconds(),
				worst.repeats, worst.busyRepeat.Seconds(), worst.other, worst.busyOther.Seconds(), worst.idle().Seconds())
		}
	}
}

package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubeloop/kubeloop/client"
	"github.com/kubeloop/kubeloop/examples/sharded"
	"github.com/kubeloop/kubeloop/sharding"
)

// scenario is one way of killing a replica and what is measured.
type scenario struct {
	measure string
	run     func(ctx context.Context, cl *cluster, tr *tracker, res *result) error
}

var scenarios = map[string]scenario{
	"kill": {"kill -9 of a shard until a survivor reconciled each of its objects",
		func(ctx context.Context, cl *cluster, tr *tracker, res *result) error {
			return runKill(ctx, cl, tr, res, false)
		}},
	"kill-sharder": {"kill -9 of the sharder's shard, likewise",
		func(ctx context.Context, cl *cluster, tr *tracker, res *result) error {
			return runKill(ctx, cl, tr, res, true)
		}},
	"scaleout": {"sharder killed in a 3->4 scale-out until all on a live shard", runScaleOut},
}

// result is one run's measure and its phases, timed from the kill.
type result struct {
	scenario   string
	victim     string
	recovered  time.Duration
	placed     time.Duration // the last label change that put a lost object on a live shard
	overlaps   int
	reconciles int
	phases     []phase
	notes      []string
	stages     string         // the kill run's stages, for the summary (breakdown.go)
	breakdown  []string       // where the time went (kill runs; breakdown.go)
	work       []survivorWork // each survivor's share (kill runs)
}

type phase struct {
	at     time.Duration
	name   string
	detail string
}

func (r *result) phase(at time.Duration, name, format string, args ...any) {
	r.phases = append(r.phases, phase{at, name, fmt.Sprintf(format, args...)})
}

func (r *result) print() {
	sort.SliceStable(r.phases, func(i, j int) bool { return r.phases[i].at < r.phases[j].at })
	fmt.Printf("   victim %s; recovered %.2f s after the kill; %d reconciles witnessed, %d overlaps\n",
		r.victim, r.recovered.Seconds(), r.reconciles, r.overlaps)
	for _, p := range r.phases {
		fmt.Printf("   %+7.2f s  %-28s %s\n", p.at.Seconds(), p.name, p.detail)
	}
	for _, n := range r.notes {
		fmt.Printf("   note: %s\n", n)
	}
	for _, b := range r.breakdown {
		fmt.Printf("   where the time goes: %s\n", b)
	}
}

var cmGK = schema.GroupKind{Kind: "ConfigMap"}

// runOne runs scenario name on a fresh control plane with 3 replicas and
// cfg.objects converged objects.
func runOne(ctx context.Context, cfg config, name string) (*result, error) {
	cl, err := newCluster(cfg)
	if cl != nil {
		defer cl.stop()
	}
	if err != nil {
		return nil, err
	}
	if cfg.keep {
		fmt.Printf("   logs and witnesses in %s\n", cl.dir)
	}
	three := []string{"a", "b", "c"}
	for _, s := range three {
		if _, err := cl.start(s); err != nil {
			return nil, err
		}
	}
	if err := cl.waitRing(ctx, 3); err != nil {
		return nil, err
	}
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	tr, err := cl.watchObjects(tctx)
	if err != nil {
		return nil, err
	}
	created := time.Now()
	if err := cl.createObjects(ctx); err != nil {
		return nil, err
	}
	if err := waitFor(ctx, 2*time.Minute, "every object reconciled on 3 shards", func() (bool, error) {
		return tr.converged(cfg.objects, three), nil
	}); err != nil {
		return nil, err
	}
	fmt.Printf("   %d objects created, assigned and reconciled on 3 shards in %.1f s\n", cfg.objects, time.Since(created).Seconds())
	time.Sleep(time.Second) // the reconciles of the last updates' events
	res := &result{scenario: name}
	runErr := scenarios[name].run(ctx, cl, tr, res)
	ov, total, err := cl.overlaps()
	if err != nil {
		return res, err
	}
	res.overlaps, res.reconciles = len(ov), total
	for i, o := range ov {
		if i == 5 {
			res.notes = append(res.notes, fmt.Sprintf("... %d overlaps in all", len(ov)))
			break
		}
		res.notes = append(res.notes, "OVERLAP "+o)
	}
	return res, runErr
}

// victimOf returns the sharder's shard and the victim among shards.
func victimOf(ctx context.Context, cl *cluster, shards []string, sharder bool) (string, string, error) {
	sh, err := cl.sharder(ctx)
	if err != nil || sh == "" {
		return "", "", fmt.Errorf("no sharder: %v", err)
	}
	if sharder {
		return sh, sh, nil
	}
	for _, s := range shards {
		if s != sh {
			return sh, s, nil
		}
	}
	return "", "", fmt.Errorf("no shard besides the sharder %s", sh)
}

func without(shards []string, s string) []string {
	return slices.DeleteFunc(slices.Clone(shards), func(x string) bool { return x == s })
}

// lastRenewal returns how long before killed the victim's shard Lease was
// last renewed (by its wall-clock renewTime; one machine, one clock).
func lastRenewal(ctx context.Context, cl *cluster, shard string, killed time.Time) (time.Duration, bool) {
	l := &coordinationv1.Lease{}
	if err := cl.c.Get(ctx, client.ObjectKey{Namespace: leaseNS, Name: sharded.Ring + "-shard-" + shard}, l); err != nil || l.Spec.RenewTime == nil {
		return 0, false
	}
	return l.Spec.RenewTime.Sub(killed), true
}

// runKill kills -9 one of 3 converged replicas (the sharder's with
// sharder) and waits until each object it owned was reconciled by a
// survivor after the kill.
func runKill(ctx context.Context, cl *cluster, tr *tracker, res *result, sharder bool) error {
	three := []string{"a", "b", "c"}
	sh, victim, err := victimOf(ctx, cl, three, sharder)
	if err != nil {
		return err
	}
	res.victim = victim
	survivors := without(three, victim)
	owned := map[string]bool{}
	for n, o := range tr.snapshot() {
		if o.shard == victim {
			owned[objectNS+"/"+n] = true
		}
	}
	var readers []*witnessReader
	var survivorReps []*replica
	for _, s := range survivors {
		w := &witnessReader{path: cl.reps[s].witness}
		if _, err := w.read(); err != nil { // skip what came before the kill
			return err
		}
		readers = append(readers, w)
		survivorReps = append(survivorReps, cl.reps[s])
	}
	pctx, stopPoll := context.WithCancel(ctx)
	defer stopPoll()
	caches := pollCaches(pctx, survivorReps)
	time.Sleep(200 * time.Millisecond) // the pollers' first counts
	v := cl.reps[victim]
	if err := v.kill(); err != nil {
		return err
	}
	k := v.killed
	res.notes = append(res.notes, fmt.Sprintf("sharder %s; %d objects on %s", sh, len(owned), victim))
	if d, ok := lastRenewal(ctx, cl, victim, k); ok {
		res.phase(d, "victim's last renewal", "(shard Lease renewTime)")
	}
	firstS, firstE := map[string]time.Time{}, map[string]time.Time{}
	err = waitFor(ctx, 90*time.Second, "a survivor's reconcile of every object of "+victim, func() (bool, error) {
		for _, w := range readers {
			lines, err := w.read()
			if err != nil {
				return false, err
			}
			for _, l := range lines {
				if !owned[l.key] || l.ts.Before(k) {
					continue
				}
				m := firstE
				if l.start {
					m = firstS
				}
				if _, ok := m[l.key]; !ok {
					m[l.key] = l.ts
				}
			}
		}
		return len(firstE) == len(owned), nil
	})
	if err != nil {
		res.notes = append(res.notes, fmt.Sprintf("%d of %d reconciled by a survivor", len(firstE), len(owned)))
		return err
	}
	var lastE, minS time.Time
	for key, t := range firstE {
		if t.After(lastE) {
			lastE = t
		}
		if s := firstS[key]; minS.IsZero() || s.Before(minS) {
			minS = s
		}
	}
	res.recovered = lastE.Sub(k)
	res.phase(minS.Sub(k), "first reconcile by survivor", "")
	res.phase(lastE.Sub(k), "last reconcile by survivor", "every object of %s reconciled by a survivor", victim)
	var firstL, lastL time.Time
	for n, o := range tr.snapshot() {
		if !owned[objectNS+"/"+n] || o.labelled.Before(k) {
			continue
		}
		if firstL.IsZero() || o.labelled.Before(firstL) {
			firstL = o.labelled
		}
		if o.labelled.After(lastL) {
			lastL = o.labelled
		}
	}
	if !firstL.IsZero() {
		res.placed = lastL.Sub(k)
		res.phase(firstL.Sub(k), "first label patched (watch)", "")
		res.phase(lastL.Sub(k), "last label patched (watch)", "")
	}
	counts, changed := caches.last()
	var cached time.Time
	for _, s := range survivors {
		res.phase(changed[s].Sub(k), "cache of "+s+" complete", "%d objects", counts[s])
		if changed[s].After(cached) {
			cached = changed[s]
		}
	}
	if err := cl.logPhases(res, survivors, victim, k); err != nil {
		return err
	}
	if err := cl.breakdown(res, survivors, victim, owned, k, lastL, cached, lastE); err != nil {
		return err
	}
	return waitFor(ctx, 90*time.Second, "every object reconciled on the survivors", func() (bool, error) {
		return tr.converged(cl.cfg.objects, survivors), nil
	})
}

// runScaleOut starts a 4th replica and kills -9 the sharder's replica once
// the first drain is seen, and waits until every object is assigned, not
// draining, to the live shard the ring over the survivors puts it on.
func runScaleOut(ctx context.Context, cl *cluster, tr *tracker, res *result) error {
	three := []string{"a", "b", "c"}
	_, victim, err := victimOf(ctx, cl, three, true)
	if err != nil {
		return err
	}
	res.victim = victim
	if _, err := cl.start("kd"); err != nil {
		return err
	}
	scaled := time.Now()
	if err := waitFor(ctx, 30*time.Second, "the first drain", func() (bool, error) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		return !tr.firstDrain.IsZero(), nil
	}); err != nil {
		return err
	}
	v := cl.reps[victim]
	if err := v.kill(); err != nil {
		return err
	}
	k := v.killed
	survivors := append(without(three, victim), "kd")
	draining, onVictim, handovers0 := 0, 0, 0
	for _, o := range tr.snapshot() {
		if o.drain != "" {
			draining++
		}
		if o.shard == victim {
			onVictim++
		}
	}
	tr.mu.Lock()
	handovers0 = tr.handovers
	tr.mu.Unlock()
	res.phase(scaled.Sub(k), "kd started", "")
	res.phase(tr.firstDrain.Sub(k), "first drain seen (watch)", "")
	res.notes = append(res.notes, fmt.Sprintf("at the kill: %d draining, %d on %s, %d handed over", draining, onVictim, victim, handovers0))
	if d, ok := lastRenewal(ctx, cl, victim, k); ok {
		res.phase(d, "victim's last renewal", "(shard Lease renewTime)")
	}
	ring := sharding.NewHashRing(survivors, 0)
	err = waitFor(ctx, 90*time.Second, "every object on its live shard", func() (bool, error) {
		snap := tr.snapshot()
		if len(snap) != cl.cfg.objects {
			return false, nil
		}
		var last time.Time
		for n, o := range snap {
			m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: objectNS, Name: n}}
			if o.drain != "" || o.shard != ring.Shard(sharding.Key(cmGK, m)) {
				return false, nil
			}
			if o.labelled.After(last) {
				last = o.labelled
			}
		}
		res.recovered = last.Sub(k)
		return true, nil
	})
	if err != nil {
		wrong := map[string]int{}
		for n, o := range tr.snapshot() {
			m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: objectNS, Name: n}}
			switch {
			case o.shard == "":
				wrong["unassigned"]++
			case o.drain != "":
				wrong["draining"]++
			case o.shard == victim:
				wrong["on the killed shard"]++
			case o.shard != ring.Shard(sharding.Key(cmGK, m)):
				wrong["elsewhere"]++
			}
		}
		res.notes = append(res.notes, fmt.Sprintf("not placed: %v", wrong))
		return err
	}
	res.placed = res.recovered
	res.phase(res.recovered, "every object on its shard", "(watch)")
	tr.mu.Lock()
	res.notes = append(res.notes, fmt.Sprintf("%d handovers after the kill", tr.handovers-handovers0))
	tr.mu.Unlock()
	if err := cl.logPhases(res, survivors, victim, k); err != nil {
		return err
	}
	if err := waitFor(ctx, 90*time.Second, "every object reconciled on the survivors", func() (bool, error) {
		return tr.converged(cl.cfg.objects, survivors), nil
	}); err != nil {
		return err
	}
	res.phase(time.Since(k), "all reconciled on survivors", "(seen by the watch; polled)")
	return nil
}

// logPhases adds the survivors' log events after the kill: the ring
// membership without the victim, the sharder's election, its sweeps.
func (cl *cluster) logPhases(res *result, survivors []string, victim string, k time.Time) error {
	for _, s := range survivors {
		lines, err := readLog(cl.reps[s], "ring membership", "running the sharder", "swept", "updated the webhook configuration")
		if err != nil {
			return err
		}
		sweeps := 0
		for _, l := range lines {
			if l.time.Before(k) {
				continue
			}
			at := l.time.Sub(k)
			switch l.msg {
			case "ring membership":
				if sh, ok := l.fields["shards"].([]any); ok && !slices.Contains(sh, any(victim)) {
					res.phase(at, s+": victim gone", "membership %v", sh)
				}
			case "running the sharder":
				res.phase(at, s+": sharder elected", "")
			case "updated the webhook configuration":
				res.phase(at, s+": webhook config", "")
			case "swept":
				sweeps++
				if sweeps > 6 {
					continue
				}
				took, _ := time.ParseDuration(fmt.Sprint(l.fields["took"]))
				res.phase(at-took, s+": sweep", "took %s: %s", took.Round(time.Millisecond), sweepFields(l.fields))
			}
		}
		if sweeps > 6 {
			res.notes = append(res.notes, fmt.Sprintf("%s swept %d times after the kill", s, sweeps))
		}
	}
	return nil
}

func sweepFields(f map[string]any) string {
	var b strings.Builder
	for _, k := range []string{"reassigned", "assigned", "drains", "pending", "conflicts"} {
		if v, ok := f[k].(float64); ok && v != 0 {
			fmt.Fprintf(&b, "%s %d ", k, int(v))
		}
	}
	return strings.TrimSpace(b.String())
}

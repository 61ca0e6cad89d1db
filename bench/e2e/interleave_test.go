package e2e_bench

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// With -interleave, BenchmarkE2E runs the latency phase of every stack by
// turns instead of one stack after the other. First every stack's cold
// start and steady state run alone in children that then end, as without
// it: these give the report's cold start, memory and steady-state
// figures (measured beside idle children holding their caches, a cold
// start ran 10-30% slower). Then a second child per stack runs its cold
// start and steady state alone again (their figures discarded) and
// waits, connected and idle, until every child has got there; the parent then
// gives the stacks turns of -interleave-block latency events each (2 ms
// apart, as without it), the first of each round of turns moving along
// the stacks, until each has had -latency. So every stack's events are
// spread over the same seconds, and a stretch of late wake-ups on the
// machine (BENCHMARKS-perf.md, issue 33 item 2) lands in every stack's
// events alike instead of in whichever stack ran then.
//
// Each turn starts with one more event that is not counted: every counted
// event then follows one of the same stack's own events 2 ms before, as
// without -interleave, not another process's (whose memory the caches
// would hold instead of the stack's; one event per stack by turns costs
// every stack 20-50 µs at its p50, the heavier stacks the most).
//
// Each child fires its events in its own lane of the fake API server
// (fakeapiserver.Process.InLane): they reach its watches alone, so the
// idle children receive nothing and cost nothing while another runs.
var (
	interleave      = flag.Bool("interleave", false, "BenchmarkE2E runs the stacks' latency phases by turns over the same seconds (hack/bench.sh sets it; see interleave_test.go)")
	interleaveBlock = flag.Int("interleave-block", 50, "with -interleave: the counted latency events of a stack's turn")
)

// interleaveEnv tells a child to take its latency events by turns; its
// value is -interleave-block.
const interleaveEnv = "KUBELOOP_E2E_INTERLEAVE"

// turnBlock is the child's -interleave-block, from interleaveEnv.
var turnBlock int

// The child's lines on the pipe to its parent, and the parent's to it.
const (
	turnsReady = "TURNS"  // child: cold start and steady state are done
	turnWarm   = "warm"   // parent: fire your next latency event, not counted
	turnGo     = "event"  // parent: fire your next latency event, counted
	turnDone   = "ok"     // child: it was reconciled
	turnFailed = "failed" // child: it was not (the error follows on stderr)
)

// warmups is how many uncounted events a stack fires by turns of block
// counted ones: one per turn.
func warmups(latency, block int) int { return (latency + block - 1) / block }

// A turnTaker runs a child's latency phase by turns: it calls event with
// k = 0, 1, ... (the prepared event to fire), counted or not, until
// latency were counted.
type turnTaker func(latency int, event func(k int, counted bool) error) error

// laneOf is the fake API server lane (the User-Agent) of a stack's child.
func laneOf(name string) string { return "kubeloop-bench-lane/" + name }

// takeTurns is the child's side, a turnTaker: it says turnsReady, then
// fires one event for each turnGo (counted) or turnWarm (not) from the
// parent, answering each with turnDone, until latency were counted.
func takeTurns(latency int, event func(k int, counted bool) error) error {
	if _, err := fmt.Fprintln(os.Stdout, turnsReady); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	for k, counted := 0, 0; counted < latency; k++ {
		if !in.Scan() {
			return fmt.Errorf("latency: the parent ended the turns after %d of %d events: %v", counted, latency, in.Err())
		}
		line := in.Text()
		if line != turnGo && line != turnWarm {
			return fmt.Errorf("latency: the parent said %q, not %q or %q", line, turnGo, turnWarm)
		}
		if line == turnGo {
			counted++
		}
		if err := event(k, line == turnGo); err != nil {
			fmt.Fprintln(os.Stdout, turnFailed)
			return err
		}
		if _, err := fmt.Fprintln(os.Stdout, turnDone); err != nil {
			return err
		}
	}
	return nil
}

// turnChild is a child process of runInterleaved.
type turnChild struct {
	name string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
}

// line reads the child's next stdout line.
func (c *turnChild) line() (string, error) {
	s, err := c.out.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%s: its output ended: %v", c.name, err)
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// runInterleaved runs the stacks named through the three phases, the
// latency phase by turns (see -interleave), and returns their results by
// name.
func runInterleaved(b *testing.B, names []string, events, eventObjects, latency, block int) map[string]result {
	b.Helper()
	if block <= 0 {
		b.Fatalf("-interleave-block %d: want at least 1", block)
	}
	var cs []*turnChild
	defer func() { // on failure: no child outlives the benchmark
		for _, c := range cs {
			if c.cmd.ProcessState == nil {
				_ = c.cmd.Process.Kill()
				_ = c.cmd.Wait()
			}
		}
	}()
	for _, name := range names {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(),
			childEnv+"="+name,
			fmt.Sprintf("%s=%d", interleaveEnv, block),
			"KUBELOOP_E2E_URL="+server.URL,
			fmt.Sprintf("KUBELOOP_E2E_ARGS=%d,%d,%d,%d,%d", *nObjects, events, eventObjects, latency, *workers),
		)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		c := &turnChild{name: name, cmd: cmd, in: in, out: bufio.NewReader(out)}
		cs = append(cs, c)
		// One child's cold start and steady state at a time, as without
		// -interleave: the others are idle meanwhile.
		if line, err := c.line(); err != nil || line != turnsReady {
			b.Fatalf("%s: before its latency phase: %q %v", name, line, err)
		}
	}
	turn := func(c *turnChild, say string, k int) {
		if _, err := fmt.Fprintln(c.in, say); err != nil {
			b.Fatalf("%s: latency event %d: %v", c.name, k, err)
		}
		if line, err := c.line(); err != nil || line != turnDone {
			b.Fatalf("%s: latency event %d: %q %v (its error is on stderr)", c.name, k, line, err)
		}
	}
	for round, lo := 0, 0; lo < latency; round, lo = round+1, lo+block {
		for j := range cs {
			c := cs[(j+round)%len(cs)]
			turn(c, turnWarm, lo)
			for k := lo; k < min(lo+block, latency); k++ {
				turn(c, turnGo, k)
			}
		}
	}
	rs := make(map[string]result, len(cs))
	for _, c := range cs {
		_ = c.in.Close()
		rest, err := io.ReadAll(c.out)
		if err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		if err := c.cmd.Wait(); err != nil {
			b.Fatalf("%s: %v\n%s", c.name, err, rest)
		}
		lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
		last := lines[len(lines)-1]
		var r result
		if err := json.Unmarshal([]byte(strings.TrimPrefix(last, "RESULT ")), &r); err != nil {
			b.Fatalf("%s: bad result %q: %v", c.name, last, err)
		}
		rs[c.name] = r
	}
	return rs
}

// benchSelects reports whether -test.bench selects BenchmarkE2E's
// sub-benchmark impl=name, reading the pattern's second slash-separated
// element as the testing package does (unanchored; no element: all).
func benchSelects(name string) bool {
	f := flag.Lookup("test.bench")
	if f == nil {
		return true
	}
	parts := splitBenchPattern(f.Value.String())
	if len(parts) < 2 {
		return true
	}
	re, err := regexp.Compile(parts[1])
	if err != nil {
		return true // the testing package reports the bad pattern itself
	}
	return re.MatchString("impl=" + name)
}

// splitBenchPattern splits a -test.bench pattern at the slashes outside
// brackets and parentheses, as the testing package does.
func splitBenchPattern(p string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[', '(':
			depth++
		case ']', ')':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth == 0 {
				parts = append(parts, p[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, p[start:])
}

package fakeapiserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// Process is a fake API server running as a child process.
type Process struct {
	URL   string
	cmd   *exec.Cmd
	stdin io.Closer
	http  *http.Client
	dir   string
	lane  string // see InLane
}

// InLane returns a handle on the same server whose Config sends lane as
// the User-Agent and whose Prepare, Fire and Stats act on that lane
// alone: the events it fires reach only the watches of clients made from
// its Config, so several benchmark children can stay connected to one
// server and take turns (bench/e2e's -interleave). Stop must not be
// called on it.
func (p *Process) InLane(lane string) *Process {
	q := &Process{URL: p.URL, http: p.http, lane: lane}
	return q
}

// laneQuery is the lane's query parameter to append to a /bench/ path.
func (p *Process) laneQuery() string {
	if p.lane == "" {
		return ""
	}
	return "&lane=" + url.QueryEscape(p.lane)
}

// Launch builds cmd/fakeapiserver (unless $KUBELOOP_FAKEAPISERVER names a
// binary) and starts it with cfg, returning once it serves. The server
// exits when Stop is called or when this process exits.
func Launch(ctx context.Context, cfg Config) (*Process, error) {
	return launch(ctx, "KUBELOOP_FAKEAPISERVER", "fakeapiserver",
		"-configmaps", fmt.Sprint(cfg.ConfigMaps), "-secrets", fmt.Sprint(cfg.Secrets), "-pods", fmt.Sprint(cfg.Pods))
}

// launch starts the command bench/cmd/<cmd> (the binary $<env> names, or
// one built now) with args and waits for its READY line.
func launch(ctx context.Context, env, cmd string, args ...string) (*Process, error) {
	p := &Process{http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
	bin := os.Getenv(env)
	if bin == "" {
		dir, err := os.MkdirTemp("", cmd)
		if err != nil {
			return nil, err
		}
		p.dir = dir
		bin = filepath.Join(dir, cmd)
		out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/kubeloop/kubeloop/bench/cmd/"+cmd).CombinedOutput()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("fakeapiserver: build: %w: %s", err, out)
		}
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stderr = os.Stderr
	p.cmd.Env = append(os.Environ(), "GOMAXPROCS=2")
	stdin, err := p.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	p.stdin = stdin
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("fakeapiserver: start: %w", err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		p.Stop()
		return nil, fmt.Errorf("fakeapiserver: no READY line: %w", err)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "READY ")
	if !ok {
		p.Stop()
		return nil, fmt.Errorf("fakeapiserver: unexpected first line %q", line)
	}
	p.URL = url
	return p, nil
}

// Config returns a client configuration for the server without client-side
// rate limiting.
func (p *Process) Config() *rest.Config {
	return &rest.Config{Host: p.URL, QPS: -1, Timeout: 0, UserAgent: p.lane}
}

// Stop ends the server and waits for it.
func (p *Process) Stop() {
	_ = p.stdin.Close()
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
	if p.dir != "" {
		_ = os.RemoveAll(p.dir)
	}
}

func (p *Process) post(path string, out any) error {
	resp, err := p.http.Post(p.URL+path, "", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fakeapiserver: %s: %s: %s", path, resp.Status, body)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(body, out)
}

// Prepare encodes count MODIFIED events over the first objects ConfigMaps.
func (p *Process) Prepare(count, objects int) (PrepareResult, error) {
	var r PrepareResult
	err := p.post(fmt.Sprintf("/bench/prepare?count=%d&objects=%d%s", count, objects, p.laneQuery()), &r)
	return r, err
}

// Fire pushes the next count prepared events to every watcher (of the
// lane, see InLane); it returns once they are queued, with the number of
// watchers.
func (p *Process) Fire(count int) (watchers int, err error) {
	var r struct{ Watchers int }
	if err := p.post(fmt.Sprintf("/bench/fire?count=%d%s", count, p.laneQuery()), &r); err != nil {
		return 0, err
	}
	if r.Watchers == 0 {
		if p.lane != "" {
			return 0, fmt.Errorf("fakeapiserver: fire: nobody in lane %q watches ConfigMaps (does the client send its Config's UserAgent?)", p.lane)
		}
		return 0, errors.New("fakeapiserver: fire: nobody watches ConfigMaps")
	}
	return r.Watchers, nil
}

// Ping makes one request round trip.
func (p *Process) Ping() error { return p.post("/bench/ping", nil) }

// Stats returns the request counters.
func (p *Process) Stats() (Stats, error) {
	var s Stats
	path := "/bench/stats"
	if p.lane != "" {
		path += "?lane=" + url.QueryEscape(p.lane)
	}
	resp, err := p.http.Get(p.URL + path)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// Connect returns a handle on a fake API server started elsewhere (a
// benchmark's child process uses it to drive the parent's server); Stop
// must not be called on it.
func Connect(url string) *Process {
	return &Process{URL: url, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}}
}

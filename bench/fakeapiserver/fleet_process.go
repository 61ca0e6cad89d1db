package fakeapiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"k8s.io/client-go/rest"
)

// FleetProcess is a Fleet served by a child process (cmd/fakefleet).
type FleetProcess struct{ *Process }

// LaunchFleet builds cmd/fakefleet (unless $KUBELOOP_FAKEFLEET names a
// binary) and starts it with cfg, returning once it serves.
func LaunchFleet(ctx context.Context, cfg FleetConfig) (*FleetProcess, error) {
	args := []string{"-configmaps", fmt.Sprint(cfg.ConfigMaps)}
	if cfg.Namespace != "" {
		args = append(args, "-namespace", cfg.Namespace)
	}
	p, err := launch(ctx, "KUBELOOP_FAKEFLEET", "fakefleet", args...)
	if err != nil {
		return nil, err
	}
	p.http = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return &FleetProcess{p}, nil
}

// Hub returns a client configuration for the hub (the cluster of the
// kubeconfig Secrets), without client-side rate limiting.
func (p *FleetProcess) Hub() *rest.Config { return p.Config() }

// Member returns a client configuration for member cluster name.
func (p *FleetProcess) Member(name string) *rest.Config {
	return &rest.Config{Host: p.URL + clustersPrefix + name, QPS: -1}
}

// CreateSecret creates the hub's kubeconfig Secret of cluster name.
func (p *FleetProcess) CreateSecret(name string) error {
	return p.do(http.MethodPost, "/bench/fleet/secret?name="+url.QueryEscape(name))
}

// DeleteSecret deletes the hub's kubeconfig Secret of cluster name.
func (p *FleetProcess) DeleteSecret(name string) error {
	return p.do(http.MethodDelete, "/bench/fleet/secret?name="+url.QueryEscape(name))
}

// Fire sends one MODIFIED event of ConfigMap 0 carrying data["seq"] = seq
// to each of clusters.
func (p *FleetProcess) Fire(seq int64, clusters ...string) error {
	return p.do(http.MethodPost, fmt.Sprintf("/bench/fleet/fire?seq=%d&clusters=%s", seq, url.QueryEscape(strings.Join(clusters, ","))))
}

// Blackhole breaks cluster name's open watches and makes it answer no
// request from now on.
func (p *FleetProcess) Blackhole(name string) error {
	return p.do(http.MethodPost, "/bench/fleet/blackhole?cluster="+url.QueryEscape(name))
}

// Restore ends cluster name's blackhole: the requests it held get a 503,
// and it answers again.
func (p *FleetProcess) Restore(name string) error {
	return p.do(http.MethodPost, "/bench/fleet/blackhole?off=1&cluster="+url.QueryEscape(name))
}

// FleetStats returns the fleet's counters.
func (p *FleetProcess) FleetStats() (FleetStats, error) {
	var s FleetStats
	err := p.get("/bench/fleet/stats", &s)
	return s, err
}

func (p *FleetProcess) do(method, path string) error {
	req, err := http.NewRequest(method, p.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := p.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fakefleet: %s %s: %s", method, path, resp.Status)
	}
	return nil
}

func (p *FleetProcess) get(path string, out any) error {
	resp, err := p.http.Get(p.URL + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fakefleet: GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

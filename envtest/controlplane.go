package envtest

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// ControlPlane configures the two processes an Environment starts, in the
// shape of controller-runtime's envtest.ControlPlane: binary paths, extra
// flags, where their output goes and their timeouts. The zero value (nil
// APIServer and Etcd) takes every default; the Environment only reads it.
type ControlPlane struct {
	// APIServer configures kube-apiserver; nil means the defaults.
	APIServer *APIServer
	// Etcd configures etcd; nil means the defaults.
	Etcd *Etcd
	// KubectlPath is accepted for controller-runtime's sake; kubeloop's
	// envtest runs no kubectl. Empty means none.
	KubectlPath string
}

// GetAPIServer returns APIServer, creating it first when nil, so that
// c.GetAPIServer().Configure().Set(...) works on a zero ControlPlane.
func (c *ControlPlane) GetAPIServer() *APIServer {
	if c.APIServer == nil {
		c.APIServer = &APIServer{}
	}
	return c.APIServer
}

// APIServer configures kube-apiserver (controller-runtime's
// envtest.APIServer, the fields kubeloop honours).
type APIServer struct {
	// Path is the kube-apiserver binary; empty means the Environment's
	// search (see Environment.BinaryAssetsDirectory). A path that is not an
	// executable fails Start.
	Path string
	// Args are raw flags added after every other one (a later flag wins).
	// Deprecated in controller-runtime in favour of Configure; still
	// honoured. Nil means none.
	Args []string
	// Out and Err receive the process's standard output and error, besides
	// the last lines Start keeps for its errors; nil means nowhere else
	// (os.Stdout and os.Stderr with Environment.AttachControlPlaneOutput).
	Out, Err io.Writer
	// StartTimeout bounds how long kube-apiserver may take to become
	// ready; 0 means Environment.ControlPlaneStartTimeout.
	StartTimeout time.Duration
	// StopTimeout bounds how long it may take to exit once killed; 0 means
	// Environment.ControlPlaneStopTimeout.
	StopTimeout time.Duration

	args *Arguments
}

// Configure returns the flags to change on kube-apiserver's command line,
// creating them on first use: Configure().Set("feature-gates", "X=true").
func (s *APIServer) Configure() *Arguments {
	if s.args == nil {
		s.args = EmptyArguments()
	}
	return s.args
}

// Etcd configures etcd (controller-runtime's envtest.Etcd, the fields
// kubeloop honours).
type Etcd struct {
	// Path is the etcd binary; empty means the Environment's search.
	Path string
	// Args are raw flags added after every other one; nil means none.
	Args []string
	// Out and Err receive the process's output besides Start's own tail;
	// nil means nowhere else.
	Out, Err io.Writer
	// StartTimeout bounds how long etcd may take to become healthy; 0
	// means Environment.ControlPlaneStartTimeout.
	StartTimeout time.Duration
	// StopTimeout bounds how long it may take to exit once killed; 0 means
	// Environment.ControlPlaneStopTimeout.
	StopTimeout time.Duration

	args *Arguments
}

// Configure returns the flags to change on etcd's command line.
func (s *Etcd) Configure() *Arguments {
	if s.args == nil {
		s.args = EmptyArguments()
	}
	return s.args
}

// argMode says how a configured flag combines with the Environment's own
// value of it.
type argMode int

const (
	argSet       argMode = iota // replace the default values
	argAppend                   // default values, then these
	argEnable                   // --key with no value, instead of the default
	argDisable                  // not passed at all
	argNoDefault                // these values only (AppendNoDefaults)
)

// Arguments are changes to a process's flags (controller-runtime's
// process.Arguments: Set, Append, AppendNoDefaults, Enable, Disable). A key
// is a flag name without dashes. Flags the Environment passes itself are
// replaced, extended or removed as asked; new flags come after them, in the
// order first configured. The zero value is not usable: use
// EmptyArguments or Configure.
type Arguments struct {
	order  []string
	modes  map[string]argMode
	values map[string][]string
}

// EmptyArguments returns Arguments that change nothing.
func EmptyArguments() *Arguments {
	return &Arguments{modes: map[string]argMode{}, values: map[string][]string{}}
}

func (a *Arguments) put(key string, mode argMode, values []string) *Arguments {
	key = strings.TrimLeft(key, "-")
	if _, ok := a.modes[key]; !ok {
		a.order = append(a.order, key)
	}
	a.modes[key] = mode
	a.values[key] = values
	return a
}

// Set passes --key=value for each value instead of the Environment's own
// value of key.
func (a *Arguments) Set(key string, values ...string) *Arguments {
	return a.put(key, argSet, append([]string(nil), values...))
}

// Append passes the Environment's own values of key (if any) and then
// these, each as --key=value.
func (a *Arguments) Append(key string, values ...string) *Arguments {
	k := strings.TrimLeft(key, "-")
	if mode, ok := a.modes[k]; ok && mode != argEnable && mode != argDisable {
		return a.put(k, mode, append(a.values[k], values...))
	}
	return a.put(k, argAppend, append([]string(nil), values...))
}

// AppendNoDefaults passes only the values given to it for key, dropping
// the Environment's own.
func (a *Arguments) AppendNoDefaults(key string, values ...string) *Arguments {
	k := strings.TrimLeft(key, "-")
	if mode, ok := a.modes[k]; ok && (mode == argNoDefault || mode == argSet) {
		return a.put(k, mode, append(a.values[k], values...))
	}
	return a.put(k, argNoDefault, append([]string(nil), values...))
}

// Enable passes --key alone, as a boolean flag.
func (a *Arguments) Enable(key string) *Arguments { return a.put(key, argEnable, nil) }

// Disable removes key from the command line, the Environment's own value
// included.
func (a *Arguments) Disable(key string) *Arguments { return a.put(key, argDisable, nil) }

// apply returns defaults (flags of the form --key=value or --key) changed
// by a; a nil a returns defaults.
func (a *Arguments) apply(defaults []string) []string {
	if a == nil || len(a.order) == 0 {
		return defaults
	}
	var out []string
	done := map[string]bool{}
	emit := func(key string, own []string) {
		switch a.modes[key] {
		case argSet, argNoDefault:
			own = nil
		case argEnable:
			out = append(out, "--"+key)
			return
		case argDisable:
			return
		}
		for _, v := range append(own, a.values[key]...) {
			out = append(out, "--"+key+"="+v)
		}
	}
	// Group the defaults by key, keeping the first position of each.
	var keys []string
	own := map[string][]string{}
	for _, flag := range defaults {
		key, val, hasVal := strings.Cut(strings.TrimLeft(flag, "-"), "=")
		if _, seen := own[key]; !seen {
			keys = append(keys, key)
			own[key] = nil
		}
		if hasVal {
			own[key] = append(own[key], val)
		}
	}
	for _, key := range keys {
		if _, changed := a.modes[key]; !changed {
			for _, v := range own[key] {
				out = append(out, "--"+key+"="+v)
			}
			if len(own[key]) == 0 {
				out = append(out, "--"+key)
			}
			continue
		}
		emit(key, own[key])
		done[key] = true
	}
	for _, key := range a.order {
		if !done[key] {
			emit(key, nil)
		}
	}
	return out
}

// Environment variables that set controller-runtime's control-plane
// options when the Environment's fields are zero.
const (
	StartTimeoutEnv = "KUBEBUILDER_CONTROLPLANE_START_TIMEOUT"
	StopTimeoutEnv  = "KUBEBUILDER_CONTROLPLANE_STOP_TIMEOUT"
	AttachOutputEnv = "KUBEBUILDER_ATTACH_CONTROL_PLANE_OUTPUT"
)

// timeouts are the per-process bounds Start resolved; a zero start bound
// means none of its own.
type timeouts struct {
	etcdStart, apiStart, etcdStop, apiStop time.Duration
}

// resolveTimeouts applies the defaulting order: the process's own field,
// the Environment's, the environment variable, the default.
func (e *Environment) resolveTimeouts() (timeouts, error) {
	start, stop := e.ControlPlaneStartTimeout, e.ControlPlaneStopTimeout
	var errs []error
	fromEnv := func(name string, d *time.Duration) {
		v := os.Getenv(name)
		if *d != 0 || v == "" {
			return
		}
		parsed, err := time.ParseDuration(v)
		if err != nil || parsed < 0 {
			errs = append(errs, fmt.Errorf("envtest: $%s=%q is not a duration such as 30s", name, v))
			return
		}
		*d = parsed
	}
	fromEnv(StartTimeoutEnv, &start)
	fromEnv(StopTimeoutEnv, &stop)
	if stop == 0 {
		stop = 10 * time.Second
	}
	t := timeouts{etcdStart: start, apiStart: start, etcdStop: stop, apiStop: stop}
	if s := e.ControlPlane.Etcd; s != nil {
		t.etcdStart = cmp.Or(s.StartTimeout, t.etcdStart)
		t.etcdStop = cmp.Or(s.StopTimeout, t.etcdStop)
	}
	if s := e.ControlPlane.APIServer; s != nil {
		t.apiStart = cmp.Or(s.StartTimeout, t.apiStart)
		t.apiStop = cmp.Or(s.StopTimeout, t.apiStop)
	}
	return t, errors.Join(errs...)
}

// outputs returns where a process's output goes besides Start's tail.
func (e *Environment) outputs(out, err io.Writer) (io.Writer, io.Writer) {
	if e.AttachControlPlaneOutput || strings.EqualFold(os.Getenv(AttachOutputEnv), "true") {
		if out == nil {
			out = os.Stdout
		}
		if err == nil {
			err = os.Stderr
		}
	}
	return out, err
}

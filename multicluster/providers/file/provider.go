package file

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/kubeloop/kubeloop/log"
	"github.com/kubeloop/kubeloop/multicluster"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/engage"
	"github.com/kubeloop/kubeloop/multicluster/providers/internal/kubeconfigs"
)

// DefaultInterval is how often the files are read when Options.Interval
// is 0.
const DefaultInterval = 5 * time.Second

// Options configures a Provider. At least one of Files and Dirs must be
// set; every other field's zero value is valid.
type Options struct {
	// Files are kubeconfig files each of whose contexts is a cluster,
	// named after the context. A file that is missing is logged and
	// contributes no cluster until it appears.
	Files []string
	// Dirs are directories each of whose files is a cluster, named after
	// the file without its extension. A directory that is missing is
	// logged and contributes no cluster until it appears.
	Dirs []string
	// Interval is how often the files are read. 0 means DefaultInterval.
	Interval time.Duration
	// Logger receives the provider's logs. The zero value means the
	// logger of Run's context (log.FromContext), named "file-provider".
	Logger logr.Logger
}

// Provider engages the clusters of kubeconfig files; see the package doc.
type Provider struct {
	opts Options
}

var _ multicluster.Provider = (*Provider)(nil)

// New returns a Provider of opts. It fails when opts names no file or
// directory, or its Interval is negative.
func New(opts Options) (*Provider, error) {
	var errs []error
	if len(opts.Files) == 0 && len(opts.Dirs) == 0 {
		errs = append(errs, errors.New("file provider: set Options.Files or Options.Dirs"))
	}
	if opts.Interval < 0 {
		errs = append(errs, fmt.Errorf("file provider: Options.Interval %s is negative", opts.Interval))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultInterval
	}
	return &Provider{opts: opts}, nil
}

// Run reads the files now and every Interval, and engages their clusters
// through s, until ctx ends.
func (p *Provider) Run(ctx context.Context, s multicluster.Sink) error {
	lg := p.opts.Logger
	if lg.GetSink() == nil {
		lg = log.FromContext(ctx).WithName("file-provider")
	}
	set := engage.NewSet(s, lg)
	defer set.Close()
	r := &reader{log: lg, reported: make(map[string]string)}
	tick := time.NewTicker(p.opts.Interval)
	defer tick.Stop()
	for {
		set.Sync(ctx, r.targets(p.opts))
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// reader reads the files; it remembers the problems it logged, to log
// each once.
type reader struct {
	log      logr.Logger
	reported map[string]string // path -> problem logged
}

// report logs err for path unless it was the last problem logged for it;
// a nil err forgets path's problem.
func (r *reader) report(path string, err error) {
	if err == nil {
		delete(r.reported, path)
		return
	}
	if r.reported[path] == err.Error() {
		return
	}
	r.reported[path] = err.Error()
	r.log.Error(err, "kubeconfig file skipped until it is fixed", "path", path)
}

// targets reads every file of opts.
func (r *reader) targets(opts Options) []engage.Target {
	var targets []engage.Target
	for _, path := range opts.Files {
		targets = append(targets, r.fileContexts(path)...)
	}
	for _, dir := range opts.Dirs {
		entries, err := os.ReadDir(dir)
		r.report(dir, err)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
				continue // a directory, a dangling link, a file removed meanwhile
			}
			targets = append(targets, fileTarget(path))
		}
	}
	return targets
}

// fileContexts returns a Target per context of the file at path.
func (r *reader) fileContexts(path string) []engage.Target {
	data, err := os.ReadFile(path)
	var cfg *clientcmdapi.Config
	if err == nil {
		cfg, err = load(path, data)
	}
	r.report(path, err)
	if err != nil {
		return nil
	}
	key := engage.Hash(data)
	var targets []engage.Target
	for _, name := range kubeconfigs.Contexts(cfg) {
		source := fmt.Sprintf("file %s, context %q", path, name)
		targets = append(targets, engage.Target{Name: name, Source: source, Key: key, Config: func() (*rest.Config, error) {
			rc, err := kubeconfigs.RESTConfig(cfg, name, kubeconfigs.Policy{AllowLocalCredentials: true})
			if err != nil {
				return nil, fmt.Errorf("%s: %w", source, err)
			}
			return rc, nil
		}})
	}
	return targets
}

// fileTarget is the cluster of one file of a directory.
func fileTarget(path string) engage.Target {
	base := filepath.Base(path)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	source := "file " + path
	data, err := os.ReadFile(path)
	if err != nil {
		return engage.Target{Name: name, Source: source, Key: "unreadable: " + err.Error(), Err: fmt.Errorf("%s: %w", source, err)}
	}
	return engage.Target{Name: name, Source: source, Key: engage.Hash(data), Config: func() (*rest.Config, error) {
		cfg, err := load(path, data)
		if err == nil {
			var rc *rest.Config
			if rc, err = kubeconfigs.RESTConfig(cfg, "", kubeconfigs.Policy{AllowLocalCredentials: true}); err == nil {
				return rc, nil
			}
		}
		return nil, fmt.Errorf("%s: %w", source, err)
	}}
}

// load parses the kubeconfig read from path and resolves its relative
// paths against path's directory.
func load(path string, data []byte) (*clientcmdapi.Config, error) {
	cfg, err := kubeconfigs.Parse(data)
	if err != nil {
		return nil, err
	}
	for _, c := range cfg.Clusters {
		c.LocationOfOrigin = path
	}
	for _, a := range cfg.AuthInfos {
		a.LocationOfOrigin = path
	}
	if err := clientcmd.ResolveLocalPaths(cfg); err != nil {
		return nil, fmt.Errorf("resolve the kubeconfig's paths: %w", err)
	}
	return cfg, nil
}

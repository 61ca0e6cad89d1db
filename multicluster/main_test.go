package multicluster_test

import (
	"errors"
	"sync"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kubeloop/kubeloop/envtest"
	"github.com/kubeloop/kubeloop/internal/testenv"
)

// planes are the fleet of the package's tests: three real control planes,
// started in parallel by TestMain and shared by every test.
var planes = &fleetPlanes{envs: make([]*envtest.Environment, 3)}

// cfgs are the planes' configs, set once they started.
var cfgs []*rest.Config

type fleetPlanes struct{ envs []*envtest.Environment }

func (p *fleetPlanes) Start() (*rest.Config, error) {
	cfgs = make([]*rest.Config, len(p.envs))
	errs := make([]error, len(p.envs))
	var wg sync.WaitGroup
	for i := range p.envs {
		p.envs[i] = &envtest.Environment{}
		wg.Go(func() { cfgs[i], errs[i] = p.envs[i].Start() })
	}
	wg.Wait()
	return cfgs[0], errors.Join(errs...)
}

func (p *fleetPlanes) Stop() error {
	errs := make([]error, len(p.envs))
	var wg sync.WaitGroup
	for i, e := range p.envs {
		if e != nil {
			wg.Go(func() { errs[i] = e.Stop() })
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

func TestMain(m *testing.M) { testenv.Main(m, testenv.Options{Env: planes}) }

package gate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/kubeloop/kubeloop/client/fake"
	"github.com/kubeloop/kubeloop/sharding/internal/gate"
	"github.com/kubeloop/kubeloop/sharding/internal/membership"
	"github.com/kubeloop/kubeloop/sharding/internal/spec"
)

// A term admits reconciles once opened, and none after Close, which
// waits for those in flight.
func ExampleGate() {
	ctx := context.Background()
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	m, _ := spec.NewMetrics(nil, "ops")
	s := &spec.Spec{Ring: "ops", Shard: "a", Namespace: "default", Holder: "a_1",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		C: fake.NewClientBuilder().WithScheme(scheme).Build(), Log: logr.Discard(), Metrics: m}
	holder, _ := membership.NewHolder(s, nil, spec.LeaseName(s.Ring, s.Shard), nil)
	if err := holder.Acquire(ctx, nil); err != nil {
		fmt.Println(err)
		return
	}

	g := gate.New(s, nil)
	t := g.Begin(1, holder, false, nil)
	_, admits := g.Current()
	fmt.Println("before Open:", admits)
	fmt.Println("Open:", g.Open(t))
	in := g.Enter(ctx)
	fmt.Println("admitted in term", in.N)
	g.Leave()
	fmt.Println("Close, none in flight:", g.Close(true))
	fmt.Println("after Close:", g.Enter(ctx) == nil, t.Ctx.Err())
	// Output:
	// before Open: false
	// Open: true
	// admitted in term 1
	// Close, none in flight: true
	// after Close: true context canceled
}

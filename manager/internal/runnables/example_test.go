package runnables_test

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"

	"github.com/kubeloop/kubeloop/manager/internal/runnables"
)

// worker runs until its context ends.
type worker struct{ name string }

func (w worker) Start(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

func nameOf(r runnables.Runnable) string { return r.(worker).name }

// A leader-only group runs one term, stops, and starts again for the next
// term with the runnable added in between; Failures collects what they
// return.
func ExampleGroup() {
	failures := runnables.NewFailures(logr.Discard())
	g := runnables.New("leader-only runnables", nameOf, failures.Add)
	g.Add(worker{"reconciler"})

	g.Start(context.Background())
	s, _ := g.Check()
	fmt.Println(s)
	fmt.Println("still running:", g.Stop(context.Background()))

	g.Add(worker{"sweeper"}) // waits for the next term
	fmt.Println("pending for the next term:", g.Restart())
	g.Start(context.Background())
	fmt.Println("still running:", g.Stop(context.Background()))
	fmt.Println("failures:", failures.Result())
	// Output:
	// running
	// still running: []
	// pending for the next term: 2
	// still running: []
	// failures: <nil>
}

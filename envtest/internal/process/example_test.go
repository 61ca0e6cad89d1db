package process_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/kubeloop/kubeloop/envtest/internal/process"
)

// A process is started, waited for until its output says it is ready,
// and killed.
func ExampleProcess() {
	p := &process.Process{Name: "server", Path: "/bin/sh", Args: []string{"-c", "echo serving; exec sleep 300"}}
	if err := p.Start(); err != nil {
		fmt.Println(err)
		return
	}
	err := p.WaitReady(context.Background(), func(context.Context) error {
		if strings.Contains(p.Output(), "serving") {
			return nil
		}
		return errors.New("not yet")
	})
	fmt.Println("ready:", err == nil)
	pid := p.PID()
	fmt.Println("stop:", p.Stop(time.Minute))
	fmt.Println("gone:", process.Gone(pid))
	// Output:
	// ready: true
	// stop: <nil>
	// gone: true
}

package signals

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// shutdownSignals are the signals that request a graceful stop.
var shutdownSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// SetupSignalHandler returns a context cancelled on the first SIGTERM or
// SIGINT. On a second one the process exits with status 1.
func SetupSignalHandler() context.Context {
	ctx, _ := handle(context.Background(), func() { os.Exit(1) }, shutdownSignals...)
	return ctx
}

// handle returns a context cancelled when the first of sigs arrives and
// calls exit when a second arrives. stop removes the handler and ends its
// goroutine (SetupSignalHandler never calls it: the handler lives as long as
// the process).
func handle(parent context.Context, exit func(), sigs ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer signal.Stop(ch)
		select {
		case <-ch:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-ch:
			fmt.Fprintf(os.Stderr, "received second signal %s, exiting\n", sig)
			exit()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-finished
		cancel()
	}
}

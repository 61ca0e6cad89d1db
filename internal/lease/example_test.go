package lease_test

import (
	"context"
	"fmt"
	"time"

	"github.com/kubeloop/kubeloop/internal/lease"
)

// A fenced write asks the holder's Valid just before it is sent.
func ExampleHolder_Valid() {
	w := newWorld()
	clock := skewed{w: w, off: 5 * time.Minute} // this replica's clock, off by 5 minutes
	h, err := lease.NewHolder(lease.Config{
		API: newMemAPI(w), Namespace: "ops", Name: "my-operator", Identity: "replica-1",
		LeaseDuration: 1900 * time.Millisecond, RenewDeadline: 1500 * time.Millisecond, RetryPeriod: 200 * time.Millisecond,
		Clock: clock,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := h.TryAcquireOrRenew(context.Background()); err != nil {
		fmt.Println(err)
		return
	}
	var fence lease.Fence = h
	write := func() {
		if !fence.Valid(clock.Now()) {
			fmt.Println("fenced: not written")
			return
		}
		fmt.Printf("written, %s left\n", fence.Deadline().Sub(clock.Now()))
	}
	write()
	w.advance(time.Second)
	write()
	w.advance(500 * time.Millisecond) // no renewal for RenewDeadline
	write()
	// Output:
	// written, 1.5s left
	// written, 500ms left
	// fenced: not written
}

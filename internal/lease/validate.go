package lease

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// JitterFactor is client-go's leaderelection.JitterFactor: an acquisition
// retry waits RetryPeriod plus up to JitterFactor*RetryPeriod.
const JitterFactor = 1.2

// Validate checks a holder's timings and returns every problem, joined
// (nil when there is none). It is client-go's rule:
//
//	LeaseDuration > RenewDeadline > JitterFactor*RetryPeriod, all positive
//
// and it is also the rule that makes a holder stop before anyone may take
// over: the Lease stores LeaseDuration rounded up, so observers wait at
// least LeaseDuration, which is more than the RenewDeadline after which the
// holder stops (see Holder.Valid). A sub-second LeaseDuration is accepted,
// as client-go accepts it, and written as one second.
func Validate(leaseDuration, renewDeadline, retryPeriod time.Duration) error {
	var errs []error
	if leaseDuration <= 0 {
		errs = append(errs, fmt.Errorf("LeaseDuration %s must be positive", leaseDuration))
	} else if leaseDuration > math.MaxInt32*time.Second {
		errs = append(errs, fmt.Errorf("LeaseDuration %s must fit leaseDurationSeconds (at most %d s)", leaseDuration, math.MaxInt32))
	}
	if renewDeadline <= 0 {
		errs = append(errs, fmt.Errorf("RenewDeadline %s must be positive", renewDeadline))
	}
	if retryPeriod <= 0 {
		errs = append(errs, fmt.Errorf("RetryPeriod %s must be positive", retryPeriod))
	}
	if leaseDuration > 0 && renewDeadline > 0 && leaseDuration <= renewDeadline {
		errs = append(errs, fmt.Errorf("LeaseDuration %s must be greater than RenewDeadline %s, so that a holder stops before others may take over", leaseDuration, renewDeadline))
	}
	if jittered := time.Duration(JitterFactor * float64(retryPeriod)); retryPeriod > 0 && renewDeadline > 0 && renewDeadline <= jittered {
		errs = append(errs, fmt.Errorf("RenewDeadline %s must be greater than %.1f*RetryPeriod (%s)", renewDeadline, JitterFactor, jittered))
	}
	return errors.Join(errs...)
}

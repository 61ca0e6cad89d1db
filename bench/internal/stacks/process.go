package stacks

import (
	"syscall"
	"time"
)

// CPUSeconds returns the user plus system CPU time this process has used.
func CPUSeconds() float64 {
	u := ReadUsage()
	return u.UserSeconds + u.SysSeconds
}

// Usage is this process's user and system CPU time and minor page faults
// so far: a cold start's CPU split where it goes (a page fault on first
// touch of fresh heap is system time).
type Usage struct {
	UserSeconds, SysSeconds float64
	MinorFaults             int64
}

// ReadUsage returns the process's Usage so far.
func ReadUsage() Usage {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return Usage{
		UserSeconds: time.Duration(ru.Utime.Nano()).Seconds(),
		SysSeconds:  time.Duration(ru.Stime.Nano()).Seconds(),
		MinorFaults: ru.Minflt,
	}
}

// Since returns what the process used between u and now.
func (u Usage) Since() Usage {
	n := ReadUsage()
	return Usage{n.UserSeconds - u.UserSeconds, n.SysSeconds - u.SysSeconds, n.MinorFaults - u.MinorFaults}
}

// PeakRSSMiB returns this process's peak resident set size.
func PeakRSSMiB() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Maxrss) / 1024 // KiB on Linux
}

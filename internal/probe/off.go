//go:build !kubeloop_probe

package probe

// Enabled reports whether the probe was built in (the kubeloop_probe
// build tag).
const Enabled = false

// Mark records that an event reached p; without the kubeloop_probe build
// tag it does nothing.
func Mark(Point) {}

// Now returns the time on the probe's monotonic clock; without the
// kubeloop_probe build tag, 0.
func Now() int64 { return 0 }

// Take returns the time of each point's last Mark, in nanoseconds on the
// probe's monotonic clock (0: not reached since the last Take), and
// clears them; without the kubeloop_probe build tag, all zero.
func Take() (t [NumPoints]int64) { return t }

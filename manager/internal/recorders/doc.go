// Package recorders is the manager's event recording: one events.k8s.io/v1
// broadcaster per manager, bound to its run, behind the recorders that
// Manager.GetEventRecorder hands out. It is a package of its own because
// its lifetime rules are the manager's shutdown guarantees for events,
// tested here against client-go's fake clientset.
//
// Guarantees:
//   - Nothing runs before Start: a manager that is never started has no
//     broadcaster and no goroutine for events.
//   - A recorder from For may be taken at any time; it forwards events
//     while the broadcaster runs and drops them, logged at V(1), before
//     Start and after Stop.
//   - One recorder per reporting controller name and run.
//   - Once Stop returns, no event request is in flight and none is made:
//     the sink counts its writes (client-go's broadcaster writes from
//     goroutines it does not track), Stop aborts and waits for them, and
//     later writes are refused.
package recorders

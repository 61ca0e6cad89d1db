// Package runnables is the manager's engine for running runnables in
// groups: the caches, the runnables that need no leadership and the
// leader-only ones each form a Group that the manager's run loop starts,
// stops and, for a new leader term, restarts. Failures collects what they
// return, for Start's result.
//
// Guarantees:
//   - Start returns once the Start of every pending runnable has been
//     called; a runnable added to a running Group starts at once, one added
//     to an idle Group waits for Start, one added to a stopped Group waits
//     for Restart.
//   - Stop cancels the runnables' context and returns the sorted names of
//     those whose Start had not returned when its context ended; none when
//     all returned (a runnable returning just as the deadline passes does
//     not count).
//   - Restart makes every member pending again, those added while the
//     Group was stopped included, so that a new term runs them all.
//   - A runnable that returns an error is reported to the Group's fail
//     func, wrapped as "manager: <name>: <error>".
//   - Check names every broken invariant of the Group's fields; Start and
//     Restart out of order panic (a bug of the caller, not of a runnable).
//   - Failures' first error before Stopping ends its Context and is the
//     first of Result's; later errors are joined after it; after Stopping,
//     context cancellation is not an error.
package runnables

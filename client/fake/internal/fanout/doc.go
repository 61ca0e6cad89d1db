// Package fanout hands the fake client's writes to its watches, as the
// API server's watch cache does: each watch sees the changes of one kind
// that its selection admits, in order, and a watch may start from a
// resourceVersion within the last History changes.
//
// Guarantees:
//   - A change that moves an object into a watch's selection arrives as
//     ADDED, one that moves it out as DELETED (with the object as it is
//     now), one inside it as MODIFIED.
//   - Publish never waits for a reader: each watcher's queue is
//     unbounded, and events are never dropped.
//   - A watcher's result channel is closed after Stop or the end of the
//     context given to Start, and its goroutine has exited by then.
//   - Hub is safe for concurrent use. Callers that must see no change
//     between listing the existing objects and registering the watch hold
//     their own lock around both, and around Publish.
package fanout

// Package signals turns SIGTERM and SIGINT into context cancellation for a
// controller's main function:
//
//	ctx := signals.SetupSignalHandler()
//	if err := mgr.Start(ctx); err != nil { ... }
//
// Guarantees:
//   - The returned context is cancelled on the first SIGTERM or SIGINT, so
//     the manager shuts down gracefully.
//   - A second signal exits the process at once with status 1, for the
//     operator who does not want to wait for the graceful shutdown.
//   - Nothing happens at import time: no init(), no handler until
//     SetupSignalHandler is called. Calling it again installs an
//     independent handler.
package signals

// Package workqueue is the queue between a controller's event handlers and
// its workers: handlers add keys (usually reconcile.Request), workers Get a
// key, process it and mark it Done.
//
//	q := workqueue.New(workqueue.Options[reconcile.Request]{Name: "deployments"})
//	defer q.ShutDown()
//	q.Add(req)                                      // ready now
//	q.AddAfter(req, time.Minute)                    // ready in a minute
//	q.AddRateLimited(req)                           // ready after a per-key backoff
//	q.AddWithOpts(workqueue.AddOpts{Priority: workqueue.LowPriority}, reqs...)
//	for {
//		req, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		err := reconcile(req)
//		if err == nil {
//			q.Forget(req) // reset the backoff
//		} else {
//			q.AddRateLimited(req)
//		}
//		q.Done(req)
//	}
//
// Guarantees:
//   - De-duplicating: a key waiting in the queue is held once, however many
//     times it is added.
//   - Stingy: a key is never handed to two workers at once. A key added
//     while it is processed is held and handed out again after Done.
//   - Delays: a key added with a delay becomes ready at the earliest of the
//     times it was asked for; adding it without a delay makes it ready now.
//   - Rate limits: AddRateLimited delays a key by its RateLimiter (by
//     default 5ms doubling to 1000s per key, and at most 10 qps with a
//     burst of 100 overall); Forget resets the key's backoff.
//   - Priorities: ready keys are handed out highest priority first and in
//     arrival order within a priority. A key added again keeps the highest
//     priority it was added with.
//   - No starvation: a key that waited Options.AgeAfter (10s by default)
//     behind keys of higher priority is served before younger keys.
//   - Fairness, with Options.FairnessKey: keys of one priority are served
//     round-robin across groups (for example namespaces), so a burst from
//     one group delays another group's key by at most one key per group.
//   - Shutdown: after ShutDown, adds are ignored and every Get, blocked or
//     not, returns shutdown at once; ShutDownWithDrain also waits until the
//     keys in flight are Done. Keys not yet handed out are dropped.
//   - Cost: one mutex, no goroutine of its own (one timer callback for
//     delays), and no allocation per Add, Get and Done once the queue has
//     seen its working set of keys.
//   - Metrics, when Options.Metrics is set: depth, adds, queue latency,
//     work duration, unfinished work, longest running and retries, with
//     client-go's meanings. A nil provider costs nothing. The queue records
//     them once, in plain fields under its own lock, reading the clock once
//     per transition, and the StatsProvider (as the manager installs) reads
//     them when it collects. A client-go style MetricsProvider, told of
//     every change, is served by NewMetricsAdapter: one goroutine per queue
//     reads the Stats every 500ms, outside the queue's hot path.
//   - Time: the queue reads only the real clock and the standard timers, so
//     testing/synctest fakes all of its time.
package workqueue

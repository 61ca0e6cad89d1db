// Package engage is the engagement bookkeeping the providers share: which
// clusters are engaged, with which connection details, and the context
// each was engaged with.
//
// A provider reads its source (Secrets, files, Cluster objects,
// ClusterProfiles), turns what it finds into the Targets of this moment,
// and hands them to Set.Sync, which compares them with what is engaged:
//
//	set := engage.NewSet(sink, log)
//	defer set.Close()
//	set.Sync(ctx, []engage.Target{{Name: "eu-1", Source: "Secret fleet/eu-1", Key: engage.Hash(data), Config: build}})
//
// Guarantees:
//   - A Target that is not engaged is engaged with a context derived from
//     Sync's; a Target whose Key changed is disengaged (its context
//     cancelled) before it is engaged again; an engaged name no Target
//     names any more is disengaged. Close disengages everything.
//   - A Target whose Err is set, whose Config fails, whose name
//     ValidateName rejects, or that the Sink refuses is not engaged (and
//     an engagement of its name with an older Key ends); the error is
//     logged once per Key, naming the Target's Source, and the Target is
//     tried again when its Key changes.
//   - Two Targets of one name: the one whose Source sorts first is used,
//     the other is logged once as a conflict.
//   - Set is not safe for concurrent use: one provider goroutine owns it.
//     Watch is the loop that drives Sync from a cache's events.
package engage

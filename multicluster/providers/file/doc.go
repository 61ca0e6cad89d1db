// Package file is a multicluster.Provider whose clusters are kubeconfig
// files: one file with many contexts (each context a cluster) and
// directories of files (each file a cluster), read again every
// Options.Interval.
//
//	p, err := file.New(file.Options{
//		Files: []string{"/etc/fleet/kubeconfig"}, // contexts "eu-1", "us-1": two clusters
//		Dirs:  []string{"/etc/fleet/clusters"},   // eu-2.yaml, ap-1.kubeconfig: clusters "eu-2", "ap-1"
//	})
//
// A file of Options.Files contributes one cluster per context, named
// after the context. A directory of Options.Dirs contributes one cluster
// per regular file in it (symbolic links followed; hidden files, such as
// the "..data" of a Kubernetes Secret or ConfigMap volume, and
// subdirectories skipped), named after the file without its extension,
// from the file's current-context (or its only context).
//
// The files are trusted as the operator's own: their kubeconfigs may run
// exec plugins and auth providers and name local files, and relative
// paths in them are resolved against the file's directory, as kubectl
// does.
//
// Guarantees:
//   - Every Interval (default 5 s) each file is read whole and its bytes
//     compared with the last read (a SHA-256): no file-system
//     notifications, no dependency, and no missed change however the file
//     was written or its mtime set. A cluster is engaged when it appears,
//     engaged again (its old context cancelled first) when the bytes of
//     its file change, and disengaged when its file or context is gone.
//     A change to a file the kubeconfig only names (a certificate path)
//     is not seen: change the kubeconfig too.
//   - A file or context that cannot be used (unreadable, not a
//     kubeconfig, no server, no current-context among several) is logged
//     once, naming the path (and context) and what is wrong, and not
//     engaged (an engagement of it from earlier bytes ends); it is engaged
//     once fixed. Nothing stops the provider. Write files atomically
//     (write elsewhere, then rename), as Kubernetes' volume updates do,
//     or a read may catch half a file.
//   - Two sources of one cluster name: the one whose path sorts first is
//     engaged, the other logged.
//   - Run returns nil when its context ends; every engagement's context
//     has ended by then.
package file

// Package binaries looks for the control-plane binaries in one
// directory, for envtest's search: the directory itself, or
// setup-envtest's <version>-<os>-<arch> subfolders of it (directly or
// under k8s/).
//
// Guarantees:
//   - LookDir takes the directory itself when it holds every binary asked
//     for; else the preferred version's subfolder when it holds them all;
//     else the newest subfolder that does (versions compared as versions,
//     not as strings: 1.31.10 is newer than 1.31.9).
//   - A binary counts only as an executable regular file.
//   - When nothing fits, LookDir says what each place lacked, so that the
//     caller's error can list it.
package binaries

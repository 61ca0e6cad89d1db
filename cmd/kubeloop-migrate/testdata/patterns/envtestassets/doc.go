// Package envtestassets starts envtest the way a suite does that lets
// controller-runtime fetch its binaries: DownloadBinaryAssets with a pinned
// version and index URL, into a setup-envtest-layout directory
// (<dir>/<version>-<os>-<arch>/). The binaries are already there, so
// nothing is downloaded.
package envtestassets

#!/usr/bin/env bash
# Builds etcd and kube-apiserver from the Go module proxy into a cache
# directory outside the clone, only when they are missing:
#   $KUBELOOP_TOOLS_DIR/<versions>/   (default root: ~/.cache/kubeloop/tools)
# Prints the directory. The versions are envtest's constants.
set -euo pipefail
root_dir="$(cd "$(dirname "$0")/.." && pwd)"
api_version="$(sed -n 's/.*KubeAPIServerVersion = "\(.*\)"/\1/p' "$root_dir/envtest/binaries.go")"
etcd_version="$(sed -n 's/.*EtcdVersion *= "\(.*\)"/\1/p' "$root_dir/envtest/binaries.go")"
cache_root="${KUBELOOP_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubeloop/tools}"
dir="$cache_root/kube-apiserver-${api_version}_etcd-${etcd_version}"

if [[ -x "$dir/kube-apiserver" && -x "$dir/etcd" ]]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$dir"
echo "building kube-apiserver $api_version and etcd $etcd_version into $dir (about 5 minutes the first time)" >&2
cd "$root_dir/tools/controlplane"
start=$(date +%s)
tmp="$(mktemp -d "$dir/.build-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
go build -trimpath -o "$tmp/" ./cmd/etcd ./cmd/kube-apiserver
mv "$tmp/etcd" "$tmp/kube-apiserver" "$dir/"
echo "built in $(( $(date +%s) - start ))s" >&2
echo "$dir"

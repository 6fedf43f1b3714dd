#!/usr/bin/env bash
# Builds the real Kubernetes control plane the tests run against (local/real-cluster/go), and
# kwok for nodes without kubelets, into a cache outside the repository keyed by the exact
# versions. A build that is already there is reused. Prints the binaries' directory last.
#
#   scripts/build-real-cluster.sh            # build when missing, print the directory
#   scripts/build-real-cluster.sh --no-build # print the directory, or exit 3 when not built
#   OME_REAL_CLUSTER_CACHE=/path scripts/build-real-cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."

module=local/real-cluster/go
kwok_version=v0.8.0
cache_root=${OME_REAL_CLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ome-pinning/real-cluster}

# The key covers everything that decides the binaries: the Go toolchain, the module's pinned
# versions and sources, and kwok's version.
key=$({
  go version
  echo "kwok $kwok_version"
  cat "$module/go.mod" "$module/go.sum" "$module/etcd/main.go"
} | sha256sum | cut -c1-16)
out="$cache_root/$key"
binaries=(kube-apiserver kube-controller-manager kube-scheduler etcd kwok)

complete=true
for binary in "${binaries[@]}"; do [ -x "$out/$binary" ] || complete=false; done
if $complete; then
  echo "$out"
  exit 0
fi

if [ "${1:-}" = --no-build ]; then
  echo "not built: run scripts/build-real-cluster.sh" >&2
  exit 3
fi

mkdir -p "$out.partial"
started=$(date +%s)
echo "building the real control plane into $out (a cold build takes a while)" >&2
(
  cd "$module"
  # Smaller binaries, no debug info: the tests never debug the control plane.
  go build -trimpath -ldflags='-s -w' -o "$out.partial/" \
    k8s.io/kubernetes/cmd/kube-apiserver \
    k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler \
    ./etcd
)
# kwok is built from its own module, so its dependency versions never move ours.
GOBIN="$out.partial" go install -trimpath -ldflags='-s -w' "sigs.k8s.io/kwok/cmd/kwok@$kwok_version"
rm -rf "$out"
mv "$out.partial" "$out"
echo "built in $(($(date +%s) - started)) s" >&2
echo "$out"

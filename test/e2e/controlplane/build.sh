#!/usr/bin/env bash
# Builds a real etcd and the Kubernetes server binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet) for the end-to-end and node tests, from the Go module proxy only, into a cache
# folder, and prints where they are. A second run with the same versions rebuilds nothing.
#
#   bash test/e2e/controlplane/build.sh
#
# Output (stdout, one per line, for scripts): KUBE_APISERVER=<path> KUBE_CONTROLLER_MANAGER=<path>
#   KUBE_SCHEDULER=<path> KUBELET=<path> ETCD=<path> CONTROLPLANE_DIR=<dir> KUBERNETES_VERSION=v1.N.P
#   ETCD_VERSION=v3.N.P
# Progress and timings go to stderr.
#
# Env:
#   NPD_CONTROLPLANE_DIR  folder for the binaries (default: <repo>/.cache/controlplane/<k8s>-etcd-<etcd>)
#   NPD_GOTOOLCHAIN       GOTOOLCHAIN for the build (default: auto = the local Go unless a go.mod needs
#                         a newer one, which the go command then fetches from the module proxy)
#   NPD_CONTROLPLANE_REBUILD=1  rebuild even if the stamp matches
# GOPATH and GOCACHE are left at their defaults so later runs reuse the module and build caches.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

# The versions come from the wrapper modules themselves, so go.mod is the one place to change them.
mod_version() { # <go.mod> <module path>
  awk -v m="$2" '$1 == m && $2 ~ /^v/ { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$1"
}
K8S_VERSION="$(mod_version "$here/kubernetes/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3)"
if [[ ! "$K8S_VERSION" =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  echo "build.sh: cannot read the k8s.io/kubernetes version from kubernetes/go.mod (got '$K8S_VERSION')" >&2
  exit 1
fi
K8S_MINOR="${BASH_REMATCH[1]}"
if [[ ! "$ETCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]]; then
  echo "build.sh: cannot read the etcd server version from etcd/go.mod (got '$ETCD_VERSION')" >&2
  exit 1
fi

out="${NPD_CONTROLPLANE_DIR:-$repo/.cache/controlplane/$K8S_VERSION-etcd-$ETCD_VERSION}"
k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet)
apiserver_bin="$out/kube-apiserver"
etcd_bin="$out/etcd"
stamp="$out/STAMP"

# Version stamping: k8s.io/kubernetes built as a module has no git tree, so /version would say
# v0.0.0-master+$Format:%H$ without these. etcd's version is a constant in go.etcd.io/etcd/api/v3.
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$K8S_MINOR"
  k8s_ldflags+=" -X $pkg.gitTreeState=clean"
done
etcd_ldflags="-s -w"

want_stamp="$(
  echo "${k8s_cmds[*]} $K8S_VERSION"
  echo "etcd $ETCD_VERSION"
  echo "k8s-ldflags $k8s_ldflags"
  echo "etcd-ldflags $etcd_ldflags"
  (cd "$here" && sha256sum kubernetes/go.mod kubernetes/go.sum etcd/go.mod etcd/go.sum)
)"

print_paths() {
  echo "KUBE_APISERVER=$apiserver_bin"
  echo "KUBE_CONTROLLER_MANAGER=$out/kube-controller-manager"
  echo "KUBE_SCHEDULER=$out/kube-scheduler"
  echo "KUBELET=$out/kubelet"
  echo "ETCD=$etcd_bin"
  echo "CONTROLPLANE_DIR=$out"
  echo "KUBERNETES_VERSION=$K8S_VERSION"
  echo "ETCD_VERSION=$ETCD_VERSION"
}

up_to_date() {
  local c
  for c in "${k8s_cmds[@]}"; do [[ -x "$out/$c" ]] || return 1; done
  [[ -x "$etcd_bin" && -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want_stamp" ]]
}

# One build at a time per folder (two test runs started together must not both link a 2 GiB binary).
# shellcheck source=../../tools/go-build-cache.sh
. "$repo/test/tools/go-build-cache.sh"
go_build_cache_start "$out" "${NPD_CONTROLPLANE_REBUILD:-}" "Kubernetes $K8S_VERSION and etcd $ETCD_VERSION are"
rm -f "$stamp"

build_etcd() {
  local start=$SECONDS
  echo "build.sh: building etcd (this takes minutes when the Go build cache is cold)" >&2
  # -mod=readonly is the default: go.sum is committed, so the build is what it says.
  go build -C "$here/etcd" -trimpath -ldflags "$etcd_ldflags" -o "$etcd_bin.tmp.$$" go.etcd.io/etcd/server/v3
  mv -f "$etcd_bin.tmp.$$" "$etcd_bin"
  echo "build.sh: built $etcd_bin in $((SECONDS - start))s" >&2
}

# One go build for the four Kubernetes commands: they share most packages, so one build compiles each
# package once and links the four binaries in parallel (about 2 GiB each at link time).
build_kubernetes() {
  local start=$SECONDS tmp="$out/.build.$$" pkgs=() c
  for c in "${k8s_cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
  echo "build.sh: building ${k8s_cmds[*]} (10-25 minutes when the Go build cache is cold)" >&2
  rm -rf "$tmp" && mkdir -p "$tmp"
  go build -C "$here/kubernetes" -trimpath -ldflags "$k8s_ldflags" -o "$tmp/" "${pkgs[@]}"
  for c in "${k8s_cmds[@]}"; do mv -f "$tmp/$c" "$out/$c"; done
  rm -rf "$tmp"
  echo "build.sh: built ${k8s_cmds[*]} in $((SECONDS - start))s ($(du -ch "${k8s_cmds[@]/#/$out/}" | tail -n1 | cut -f1))" >&2
}
trap 'rm -rf "$etcd_bin.tmp.$$" "$out/.build.$$"' EXIT

total=$SECONDS
build_etcd
build_kubernetes

for c in "${k8s_cmds[@]}"; do "$out/$c" --version >&2; done
"$etcd_bin" --version >&2
printf '%s\n' "$want_stamp" >"$stamp"
echo "build.sh: done in $((SECONDS - total))s" >&2
print_paths

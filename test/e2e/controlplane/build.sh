#!/usr/bin/env bash
# Builds a real kube-apiserver and etcd for the end-to-end tests, from the Go module proxy only,
# into a cache folder, and prints where they are. A second run with the same versions rebuilds nothing.
#
#   bash test/e2e/controlplane/build.sh
#
# Output (stdout, one per line, for scripts): KUBE_APISERVER=<path> ETCD=<path> CONTROLPLANE_DIR=<dir>
#   KUBERNETES_VERSION=v1.N.P ETCD_VERSION=v3.N.P
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
K8S_VERSION="$(mod_version "$here/apiserver/go.mod" k8s.io/kubernetes)"
ETCD_VERSION="$(mod_version "$here/etcd/go.mod" go.etcd.io/etcd/server/v3)"
if [[ ! "$K8S_VERSION" =~ ^v1\.([0-9]+)\.[0-9]+$ ]]; then
  echo "build.sh: cannot read the k8s.io/kubernetes version from apiserver/go.mod (got '$K8S_VERSION')" >&2
  exit 1
fi
K8S_MINOR="${BASH_REMATCH[1]}"
if [[ ! "$ETCD_VERSION" =~ ^v3\.[0-9]+\.[0-9]+$ ]]; then
  echo "build.sh: cannot read the etcd server version from etcd/go.mod (got '$ETCD_VERSION')" >&2
  exit 1
fi

out="${NPD_CONTROLPLANE_DIR:-$repo/.cache/controlplane/$K8S_VERSION-etcd-$ETCD_VERSION}"
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
  echo "kube-apiserver $K8S_VERSION"
  echo "etcd $ETCD_VERSION"
  echo "k8s-ldflags $k8s_ldflags"
  echo "etcd-ldflags $etcd_ldflags"
  (cd "$here" && sha256sum apiserver/go.mod apiserver/go.sum etcd/go.mod etcd/go.sum)
)"

print_paths() {
  echo "KUBE_APISERVER=$apiserver_bin"
  echo "ETCD=$etcd_bin"
  echo "CONTROLPLANE_DIR=$out"
  echo "KUBERNETES_VERSION=$K8S_VERSION"
  echo "ETCD_VERSION=$ETCD_VERSION"
}

up_to_date() {
  [[ -x "$apiserver_bin" && -x "$etcd_bin" && -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want_stamp" ]]
}

# One build at a time per folder (two test runs started together must not both link a 2 GiB binary).
# shellcheck source=../../tools/go-build-cache.sh
. "$repo/test/tools/go-build-cache.sh"
go_build_cache_start "$out" "${NPD_CONTROLPLANE_REBUILD:-}" "kube-apiserver $K8S_VERSION and etcd $ETCD_VERSION are"
rm -f "$stamp"

build() { # <module dir> <package> <output> <ldflags>
  local start=$SECONDS
  echo "build.sh: building $2 in $1 (this takes minutes when the Go build cache is cold)" >&2
  # -mod=readonly is the default: go.sum is committed, so the build is what it says.
  go build -C "$1" -trimpath -ldflags "$4" -o "$3.tmp.$$" "$2"
  mv -f "$3.tmp.$$" "$3"
  echo "build.sh: built $3 in $((SECONDS - start))s ($(du -h "$3" | cut -f1))" >&2
}
trap 'rm -f "$apiserver_bin.tmp.$$" "$etcd_bin.tmp.$$"' EXIT

total=$SECONDS
# In turn, not together: the kube-apiserver link alone needs about 2 GiB and both cores.
build "$here/etcd" go.etcd.io/etcd/server/v3 "$etcd_bin" "$etcd_ldflags"
build "$here/apiserver" k8s.io/kubernetes/cmd/kube-apiserver "$apiserver_bin" "$k8s_ldflags"

"$apiserver_bin" --version >&2
"$etcd_bin" --version >&2
printf '%s\n' "$want_stamp" >"$stamp"
echo "build.sh: done in $((SECONDS - total))s" >&2
print_paths

#!/usr/bin/env bash
# Builds the real operator tools the Helm and alert tests run, from the Go module proxy only, into a
# cache folder, and prints where they are. A second run with the same versions rebuilds nothing.
#
#   bash test/tools/go-tools.sh
#
# Output (stdout, one per line, for scripts): HELM=<path> PROMTOOL=<path>
#   PROMETHEUS_OPERATOR_CRDS=<dir of monitoring.coreos.com_*.yaml> GO_TOOLS_DIR=<dir>
# Progress and timings go to stderr.
#
# Env:
#   NPD_GO_TOOLS_DIR       folder for the tools (default: <repo>/.cache/tools/<versions>)
#   NPD_GO_TOOLS_REBUILD=1 rebuild even if the stamp matches
# GOPATH and GOCACHE are left at their defaults so later runs reuse the module and build caches.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

# The one place to change a version. Each module's go.mod has no replace directives, so
# `go install module/cmd@version` builds exactly what the module (and the checksum database) says.
HELM_VERSION=v3.22.0
# Prometheus tags v3.N.P as module version v0.3NN.P.
PROMETHEUS_VERSION=v0.316.0
PROMETHEUS_OPERATOR_VERSION=v0.85.0

out="${NPD_GO_TOOLS_DIR:-$repo/.cache/tools/helm-$HELM_VERSION-prom-$PROMETHEUS_VERSION-op-$PROMETHEUS_OPERATOR_VERSION}"
helm_bin="$out/helm"
promtool_bin="$out/promtool"
crd_dir="$out/prometheus-operator-crds"
stamp="$out/STAMP"

command -v go >/dev/null || { echo "go-tools.sh: go is not on PATH" >&2; exit 1; }
# As helm's Makefile does: the Kubernetes version `helm template` and `helm lint` assume (without
# a cluster) is the one of the client-go it is built with (v0.N.P -> 1.N); unset, it is 1.20.
helm_gomod="$(cd /tmp && go mod download -json "helm.sh/helm/v3@$HELM_VERSION" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')"
client_go="$(awk '$1 == "k8s.io/client-go" { print $2; exit }' "$helm_gomod")"
[[ "$client_go" =~ ^v0\.([0-9]+)\. ]] || { echo "go-tools.sh: no k8s.io/client-go in $helm_gomod" >&2; exit 1; }
helm_k8s_minor="${BASH_REMATCH[1]}"
helm_ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION"
helm_ldflags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
for pkg in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
  helm_ldflags+=" -X $pkg.k8sVersionMajor=1 -X $pkg.k8sVersionMinor=$helm_k8s_minor"
done
prom_ldflags="-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION"

want_stamp="$(
  echo "helm $HELM_VERSION $helm_ldflags"
  echo "promtool $PROMETHEUS_VERSION $prom_ldflags"
  echo "prometheus-operator-crds $PROMETHEUS_OPERATOR_VERSION"
)"

print_paths() {
  echo "HELM=$helm_bin"
  echo "PROMTOOL=$promtool_bin"
  echo "PROMETHEUS_OPERATOR_CRDS=$crd_dir"
  echo "GO_TOOLS_DIR=$out"
}

up_to_date() {
  [[ -x "$helm_bin" && -x "$promtool_bin" && -d "$crd_dir" && -f "$stamp" ]] &&
    [[ "$(cat "$stamp")" == "$want_stamp" ]]
}

# shellcheck source=go-build-cache.sh
. "$here/go-build-cache.sh"
go_build_cache_start "$out" "${NPD_GO_TOOLS_REBUILD:-}" "helm $HELM_VERSION, promtool $PROMETHEUS_VERSION and CRDs are"
rm -f "$stamp"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

build() { # <module/cmd@version> <output> <ldflags>
  local start=$SECONDS
  echo "go-tools.sh: building $1 (minutes when the Go build cache is cold)" >&2
  GOBIN="$tmp/bin" go install -trimpath -ldflags "$3" "$1"
  mv -f "$tmp/bin/$(basename "$2")" "$2"
  echo "go-tools.sh: built $2 in $((SECONDS - start))s ($(du -h "$2" | cut -f1))" >&2
}

crds() {
  local mod="github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" dir
  # Only the module zip is needed (no build): its example/ folder holds the CRDs the operator installs.
  dir="$(cd "$tmp" && go mod download -json "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$dir" ]] || { echo "go-tools.sh: go mod download $mod gave no Dir" >&2; exit 1; }
  rm -rf "$crd_dir" && mkdir -p "$crd_dir"
  cp "$dir"/example/prometheus-operator-crd/monitoring.coreos.com_*.yaml "$crd_dir/"
  chmod -R u+w "$crd_dir"
  echo "go-tools.sh: copied $(ls "$crd_dir" | wc -l) CRDs of prometheus-operator $PROMETHEUS_OPERATOR_VERSION" >&2
}

total=$SECONDS
crds
# In turn, not together: the machine has few cores and each link wants all of them.
build "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" "$helm_bin" "$helm_ldflags"
build "github.com/prometheus/prometheus/cmd/promtool@$PROMETHEUS_VERSION" "$promtool_bin" "$prom_ldflags"

"$helm_bin" version --short >&2
"$promtool_bin" --version 2>&1 | head -n 1 >&2
printf '%s\n' "$want_stamp" >"$stamp"
echo "go-tools.sh: done in $((SECONDS - total))s" >&2
print_paths

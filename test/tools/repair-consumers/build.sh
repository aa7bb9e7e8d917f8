#!/usr/bin/env bash
# The repair controllers' own pieces for the consumer tests (test/e2e/repair-*.test.ts), from their Go
# modules (the Go module proxy only), pinned, into a cache folder:
#   - the CRDs of medik8s NodeHealthCheck and of Cluster API (MachineHealthCheck v1beta2), as the
#     projects generate them (config/crd/bases in each module zip), so the shipped examples
#     (deploy/examples/) are validated by the real API server against the real schema;
#   - NHC's ValidatingWebhookConfiguration (config/webhook/manifests.yaml), whose checks (one of
#     minHealthy/maxUnhealthy, a selector, a template) the CRD schema does not carry;
#   - the NodeHealthCheck controller itself (cmd/ of the operator module), which the e2e test runs
#     against the test control plane.
# A second run with the same versions does nothing. Measured (2 cores shared, load 7-8): fully cold
# (empty module and build caches) 5 m 50 s wall, 4 m user, 1.1 GiB peak RSS, 431 MiB of modules and
# 1.3 GiB of build cache; warm build cache 10 s; cached 0.02 s. .ci/dev runs it in the background.
#
#   bash test/tools/repair-consumers/build.sh
#
# Output (stdout): NHC_MANAGER=<binary> NHC_CRDS=<dir> NHC_WEBHOOK=<file> CAPI_CRDS=<dir>.
# Progress and timings go to stderr.
# Env: NPD_REPAIR_CONSUMERS_DIR (default <repo>/.cache/repair-consumers/<versions>),
#      NPD_REPAIR_CONSUMERS_REBUILD=1.
#
# The Node Readiness Controller (sigs.k8s.io/node-readiness-controller) is not here: the module proxy
# serves no version of it (every tag and the version list answer 403), so its CRD cannot be fetched.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

# The one place to change a version.
NHC_VERSION=v0.12.0
CAPI_VERSION=v1.13.6
# NHC's go.mod pins k8s.io/kube-aggregator v0.34.7 (through openshift/library-go), a version the module
# proxy does not serve (403, as v0.34.6). v0.34.5 is the nearest one below it: a replace to a lower
# patch of the same minor keeps every other module at NHC's own pins (a higher one would raise
# k8s.io/api and the rest through MVS). NHC's code does not call the aggregator; library-go's
# apiregistration helpers import it.
KUBE_AGGREGATOR_REPLACE=v0.34.5

out="${NPD_REPAIR_CONSUMERS_DIR:-$repo/.cache/repair-consumers/nhc-$NHC_VERSION-capi-$CAPI_VERSION}"
stamp="$out/STAMP"
ldflags="-s -w -X github.com/medik8s/node-healthcheck-operator/version.Version=${NHC_VERSION#v}"
want_stamp="nhc $NHC_VERSION $ldflags kube-aggregator=$KUBE_AGGREGATOR_REPLACE; capi $CAPI_VERSION"

print_paths() {
  echo "NHC_MANAGER=$out/nhc-manager"
  echo "NHC_CRDS=$out/nhc-crds"
  echo "NHC_WEBHOOK=$out/nhc-webhook.yaml"
  echo "CAPI_CRDS=$out/capi-crds"
}
up_to_date() {
  [[ -x "$out/nhc-manager" && -d "$out/nhc-crds" && -f "$out/nhc-webhook.yaml" && -d "$out/capi-crds" && -f "$stamp" ]] &&
    [[ "$(cat "$stamp")" == "$want_stamp" ]]
}

# shellcheck source=../go-build-cache.sh
. "$here/../go-build-cache.sh"
go_build_cache_start "$out" "${NPD_REPAIR_CONSUMERS_REBUILD:-}" "NHC $NHC_VERSION and the CAPI $CAPI_VERSION CRDs are"
rm -f "$stamp"

module_dir() { # <module@version>: downloads the module zip, prints its (read-only) folder
  local dir
  dir="$(cd /tmp && go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$dir" ]] || { echo "repair-consumers/build.sh: go mod download $1 gave no Dir" >&2; exit 1; }
  echo "$dir"
}

total=$SECONDS
nhc_dir="$(module_dir "github.com/medik8s/node-healthcheck-operator@$NHC_VERSION")"
capi_dir="$(module_dir "sigs.k8s.io/cluster-api@$CAPI_VERSION")"
rm -rf "$out/nhc-crds" "$out/capi-crds" && mkdir -p "$out/nhc-crds" "$out/capi-crds"
cp "$nhc_dir"/config/crd/bases/*.yaml "$out/nhc-crds/"
cp "$nhc_dir/config/webhook/manifests.yaml" "$out/nhc-webhook.yaml"
# MachineHealthCheck only: the other CAPI CRDs are not needed to validate it.
cp "$capi_dir/config/crd/bases/cluster.x-k8s.io_machinehealthchecks.yaml" "$out/capi-crds/"
chmod -R u+w "$out/nhc-crds" "$out/capi-crds" "$out/nhc-webhook.yaml"

# The module cache is read-only: build in a writable copy, as test/tools/npd/build.sh does.
start=$SECONDS
echo "repair-consumers/build.sh: building the NodeHealthCheck controller $NHC_VERSION (minutes when the Go build cache is cold)" >&2
rm -rf "$out/src"
cp -r "$nhc_dir" "$out/src"
chmod -R u+w "$out/src"
(cd "$out/src" && go mod edit -replace "k8s.io/kube-aggregator=k8s.io/kube-aggregator@$KUBE_AGGREGATOR_REPLACE" &&
  GOFLAGS=-mod=mod go build -trimpath -ldflags "$ldflags" -o "$out/nhc-manager" ./cmd) >&2
rm -rf "$out/src"
echo "repair-consumers/build.sh: built $out/nhc-manager in $((SECONDS - start))s ($(du -h "$out/nhc-manager" | cut -f1))" >&2
printf '%s\n' "$want_stamp" >"$stamp"
echo "repair-consumers/build.sh: done in $((SECONDS - total))s" >&2
print_paths

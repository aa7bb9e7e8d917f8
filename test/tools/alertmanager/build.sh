#!/usr/bin/env bash
# Builds the real Alertmanager from its Go module (the Go module proxy only) into a cache folder and
# prints where it is, for the notification test (test/helm/alertmanager.test.ts). Kept apart from
# test/tools/go-tools.sh so that bumping one tool does not rebuild the others.
#
#   bash test/tools/alertmanager/build.sh
#
# Output (stdout): ALERTMANAGER=<path>. Progress and timings go to stderr.
# Env: NPD_ALERTMANAGER_DIR (default <repo>/.cache/alertmanager/<version>), NPD_ALERTMANAGER_REBUILD=1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

# The module's go.mod has no replace directives, so `go install` builds what the module says.
ALERTMANAGER_VERSION=v0.28.1
out="${NPD_ALERTMANAGER_DIR:-$repo/.cache/alertmanager/$ALERTMANAGER_VERSION}"
bin="$out/alertmanager"
stamp="$out/STAMP"
ldflags="-s -w -X github.com/prometheus/common/version.Version=${ALERTMANAGER_VERSION#v}"
want_stamp="alertmanager $ALERTMANAGER_VERSION $ldflags"

print_paths() { echo "ALERTMANAGER=$bin"; }
up_to_date() { [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want_stamp" ]]; }

# shellcheck source=../go-build-cache.sh
. "$here/../go-build-cache.sh"
go_build_cache_start "$out" "${NPD_ALERTMANAGER_REBUILD:-}" "alertmanager $ALERTMANAGER_VERSION is"
rm -f "$stamp"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS
echo "alertmanager/build.sh: building alertmanager $ALERTMANAGER_VERSION (a few minutes when the Go build cache is cold)" >&2
GOBIN="$tmp/bin" go install -trimpath -ldflags "$ldflags" "github.com/prometheus/alertmanager/cmd/alertmanager@$ALERTMANAGER_VERSION"
mv -f "$tmp/bin/alertmanager" "$bin"
"$bin" --version 2>&1 | head -n 1 >&2
printf '%s\n' "$want_stamp" >"$stamp"
echo "alertmanager/build.sh: built $bin in $((SECONDS - start))s ($(du -h "$bin" | cut -f1))" >&2
print_paths

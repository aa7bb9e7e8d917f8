#!/usr/bin/env bash
# Builds a real OpenTelemetry Collector for the OTLP sink tests with the Collector's own builder
# (go.opentelemetry.io/collector/cmd/builder), from the Go module proxy only, into a cache folder,
# and prints where it is. A second run with the same manifest rebuilds nothing.
#
#   bash test/tools/otelcol/build.sh
#
# Output (stdout, one per line, for scripts): OTELCOL=<path> OTELCOL_DIR=<dir> OTELCOL_VERSION=<v>
# Progress and timings go to stderr.
#
# Env:
#   NPD_OTELCOL_DIR       folder for the builder and the Collector (default: <repo>/.cache/otelcol/<version>)
#   NPD_GOTOOLCHAIN       GOTOOLCHAIN for the build (default: auto)
#   NPD_OTELCOL_REBUILD=1 rebuild even if the stamp matches
# GOPATH and GOCACHE are left at their defaults so later runs reuse the module and build caches.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
manifest="$here/builder.yaml"

# The version comes from the manifest, so builder.yaml is the one place to change it.
VERSION="$(awk '$1 == "version:" { print $2; exit }' "$manifest")"
if [[ ! "$VERSION" =~ ^0\.[0-9]+\.[0-9]+$ ]]; then
  echo "build.sh: cannot read dist.version from $manifest (got '$VERSION')" >&2
  exit 1
fi
# Every component must be the release the builder generates code for: a mismatch fails late in go build.
if grep -E '^\s*- gomod:' "$manifest" | grep -vq " v$VERSION\$"; then
  echo "build.sh: every gomod line in $manifest must be at v$VERSION" >&2
  exit 1
fi

out="${NPD_OTELCOL_DIR:-$repo/.cache/otelcol/$VERSION}"
builder_bin="$out/bin/builder"
otelcol_bin="$out/otelcol"
stamp="$out/STAMP"
ldflags="-s -w"

want_stamp="$(
  echo "builder v$VERSION"
  echo "ldflags $ldflags"
  (cd "$here" && sha256sum builder.yaml)
)"

print_paths() {
  echo "OTELCOL=$otelcol_bin"
  echo "OTELCOL_DIR=$out"
  echo "OTELCOL_VERSION=$VERSION"
}

up_to_date() {
  [[ -x "$otelcol_bin" && -f "$stamp" ]] && [[ "$(cat "$stamp")" == "$want_stamp" ]]
}

# One build at a time per folder (two test runs started together must not both build).
# shellcheck source=../go-build-cache.sh
. "$repo/test/tools/go-build-cache.sh"
go_build_cache_start "$out" "${NPD_OTELCOL_REBUILD:-}" "otelcol $VERSION is"
rm -f "$stamp"
total=$SECONDS

if [[ ! -x "$builder_bin" ]] || [[ "$("$builder_bin" version 2>&1)" != *"$VERSION"* ]]; then
  echo "build.sh: installing the builder v$VERSION" >&2
  GOBIN="$out/bin" go install "go.opentelemetry.io/collector/cmd/builder@v$VERSION"
fi

# The builder generates main.go and go.mod under ./src (output_path), then runs go mod tidy and go build.
# Its tidy also resolves the tests of fileexporter, and one module those import
# (extension/encoding/otlpencodingextension) is not served by the module proxy. The tests are never built,
# so tidy runs with -e (GOFLAGS applies a flag only to the go commands that know it); a module the build
# itself needs still fails go build.
echo "build.sh: building the Collector (minutes when the Go build cache is cold)" >&2
rm -rf "$out/src"
(cd "$out" && GOFLAGS="${GOFLAGS:-} -e" "$builder_bin" --config="$manifest" --ldflags="$ldflags")
mv -f "$out/src/otelcol-npd-test" "$otelcol_bin"

"$otelcol_bin" --version >&2
"$otelcol_bin" components >/dev/null
printf '%s\n' "$want_stamp" >"$stamp"
echo "build.sh: done in $((SECONDS - total))s ($(du -h "$otelcol_bin" | cut -f1))" >&2
print_paths

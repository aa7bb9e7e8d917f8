#!/usr/bin/env bash
# Builds the real node-problem-detector (Go) from its module, for the side-by-side benchmark
# (`npm run bench -- vs-npd`), into a cache folder, and prints the binary's path. A second run with
# the same version rebuilds nothing.
#
#   bash test/tools/npd/build.sh      -> NPD=<path to node-problem-detector>
#
# `go install k8s.io/node-problem-detector/cmd/nodeproblemdetector@v1.36.0` is refused here (the
# proxy does not serve the version list), but `go mod download` of the exact version works; the
# module cache is read-only, so the build runs in a writable copy of it.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
NPD_VERSION=v1.36.0
out="${NPD_GO_NPD_DIR:-$repo/.cache/npd-$NPD_VERSION}"
bin="$out/node-problem-detector"

command -v go >/dev/null || { echo "npd/build.sh: go is not on PATH" >&2; exit 1; }
if [[ -x "$bin" && -f "$out/STAMP" && "$(cat "$out/STAMP")" == "$NPD_VERSION" ]]; then
  echo "NPD=$bin"
  exit 0
fi
start=$SECONDS
src_dir="$(cd /tmp && go mod download -json "k8s.io/node-problem-detector@$NPD_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[[ -d "$src_dir" ]] || { echo "npd/build.sh: go mod download gave no Dir" >&2; exit 1; }
mkdir -p "$out"
rm -rf "$out/src"
cp -r "$src_dir" "$out/src"
chmod -R u+w "$out/src"
# As NPD's Makefile does for a plain build: static, no systemd journal (cgo) plugin.
(cd "$out/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -o "$bin" \
  -ldflags "-s -w -X k8s.io/node-problem-detector/pkg/version.version=$NPD_VERSION" \
  ./cmd/nodeproblemdetector) >&2
echo "$NPD_VERSION" >"$out/STAMP"
echo "npd/build.sh: built $bin in $((SECONDS - start)) s" >&2
echo "NPD=$bin"

#!/usr/bin/env bash
# The kubectl plugin for krew: `kubectl npd`, the agent's fleet view (docs/fleet.md). Builds the
# plugin's bundle (one JavaScript file, no native addon: it runs on any OS and architecture with
# Node >= 22.19), packs it with deploy/kubectl-plugin/kubectl-npd, and writes the krew manifest that
# points at where the archive will be published.
#
#   bash deploy/krew/package.sh --version=<v> --out=<dir> --uri-base=<URL of the folder the archive is published in>
#
# Writes <dir>/kubectl-npd-<v>.tar.gz and <dir>/npd.yaml (its sha256 filled in), prints
# KREW_ARCHIVE= and KREW_MANIFEST= on stdout. Install without an index:
#   kubectl krew install --manifest=npd.yaml --archive=kubectl-npd-<v>.tar.gz
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
die() { printf 'krew/package.sh: %s\n' "$*" >&2; exit 2; }

version='' out='' uri_base=''
for arg in "$@"; do
  case "$arg" in
    --version=*) version="${arg#*=}" ;;
    --out=*) out="${arg#*=}" ;;
    --uri-base=*) uri_base="${arg#*=}" ;;
    *) die "unknown argument: $arg" ;;
  esac
done
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--version: want MAJOR.MINOR.PATCH, got '$version'"
[ -n "$out" ] || die "--out is required"
[ -n "$uri_base" ] || die "--uri-base is required"

(cd "$repo" && npx tsx test/tools/build.ts --kubectl-plugin) >&2
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
install -m 0755 "$repo/deploy/kubectl-plugin/kubectl-npd" "$stage/kubectl-npd"
install -m 0644 "$repo/dist/kubectl-npd/node-problem-detector.js" "$stage/node-problem-detector.js"
mkdir -p "$out"
archive="$out/kubectl-npd-$version.tar.gz"
# Fixed order, owner and times: the archive carries nothing of the machine that packed it.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$stage" -cf - kubectl-npd node-problem-detector.js |
  gzip -n >"$archive"
sha="$(sha256sum "$archive" | cut -d' ' -f1)"
sed -e "s#@VERSION@#v$version#" -e "s#@URI@#${uri_base%/}/kubectl-npd-$version.tar.gz#" -e "s#@SHA256@#$sha#" \
  "$repo/deploy/krew/npd.yaml.in" >"$out/npd.yaml"
echo "KREW_ARCHIVE=$archive"
echo "KREW_MANIFEST=$out/npd.yaml"

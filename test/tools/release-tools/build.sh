#!/usr/bin/env bash
# Builds the real tools of the release pipeline from their Go modules (the Go module proxy only) into a
# cache folder and prints where they are: crane (pushes, inspects and serves an OCI registry), syft
# (the SBOM), cosign (signature and SBOM attestation), actionlint (the release workflow) and krew (installs
# the kubectl plugin the release packages).
#
#   bash test/tools/release-tools/build.sh
#
# Output (stdout): CRANE=<path> SYFT=<path> COSIGN=<path> ACTIONLINT=<path> KREW=<path>. Progress goes to stderr.
# Env: NPD_RELEASE_TOOLS_DIR (default <repo>/.cache/release-tools/<versions>), NPD_RELEASE_TOOLS_REBUILD=1.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"

# The one place to change a version. None of these modules' go.mod has replace directives, so
# `go install module/cmd@version` builds what the module and the checksum database say.
CRANE_VERSION=v0.22.1
SYFT_VERSION=v1.57.2
# cosign v2, not v3: v3 signs through a signing config fetched from the public-good TUF root by
# default, which an offline build machine cannot reach; v2 signs with a local key and no log.
COSIGN_VERSION=v2.6.5
ACTIONLINT_VERSION=v1.7.12
# The newest krew on the module proxy (its v0.4.4 and v0.4.5 tags were never published as modules).
KREW_VERSION=v0.4.3

out="${NPD_RELEASE_TOOLS_DIR:-$repo/.cache/release-tools/crane-$CRANE_VERSION-syft-$SYFT_VERSION-cosign-$COSIGN_VERSION-actionlint-$ACTIONLINT_VERSION-krew-$KREW_VERSION}"
stamp="$out/STAMP"
# What `syft version` and `cosign version` print; without them both say "[not provided]".
syft_ldflags="-s -w -X main.version=${SYFT_VERSION#v}"
cosign_ldflags="-s -w -X sigs.k8s.io/release-utils/version.gitVersion=$COSIGN_VERSION"
want_stamp="crane $CRANE_VERSION; syft $SYFT_VERSION $syft_ldflags; cosign $COSIGN_VERSION $cosign_ldflags; actionlint $ACTIONLINT_VERSION; krew $KREW_VERSION"

print_paths() {
  echo "CRANE=$out/crane"
  echo "SYFT=$out/syft"
  echo "COSIGN=$out/cosign"
  echo "ACTIONLINT=$out/actionlint"
  echo "KREW=$out/krew"
}
up_to_date() {
  [[ -x "$out/crane" && -x "$out/syft" && -x "$out/cosign" && -x "$out/actionlint" && -x "$out/krew" && -f "$stamp" ]] &&
    [[ "$(cat "$stamp")" == "$want_stamp" ]]
}

# shellcheck source=../go-build-cache.sh
. "$here/../go-build-cache.sh"
go_build_cache_start "$out" "${NPD_RELEASE_TOOLS_REBUILD:-}" "crane, syft, cosign, actionlint and krew are"
rm -f "$stamp"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

build() { # <module/cmd@version> <ldflags>
  local start=$SECONDS name
  name="$(basename "${1%@*}")"
  echo "release-tools/build.sh: building $1 (minutes when the Go build cache is cold)" >&2
  GOBIN="$tmp/bin" go install -trimpath -ldflags "$2" "$1"
  mv -f "$tmp/bin/$name" "$out/$name"
  echo "release-tools/build.sh: built $out/$name in $((SECONDS - start))s ($(du -h "$out/$name" | cut -f1))" >&2
}

total=$SECONDS
# In turn, not together: the machine has few cores and each link wants all of them.
build "github.com/google/go-containerregistry/cmd/crane@$CRANE_VERSION" "-s -w"
build "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION" "-s -w"
build "sigs.k8s.io/krew/cmd/krew@$KREW_VERSION" "-s -w"
build "github.com/anchore/syft/cmd/syft@$SYFT_VERSION" "$syft_ldflags"
build "github.com/sigstore/cosign/v2/cmd/cosign@$COSIGN_VERSION" "$cosign_ldflags"
"$out/crane" version >&2
"$out/syft" version 2>&1 | grep -m1 '^Version' >&2
"$out/cosign" version 2>&1 | grep -m1 '^GitVersion' >&2
"$out/actionlint" -version 2>&1 | head -n 1 >&2
"$out/krew" version 2>&1 | grep -m1 -i 'GitTag' >&2 || true
printf '%s\n' "$want_stamp" >"$stamp"
echo "release-tools/build.sh: done in $((SECONDS - total))s" >&2
print_paths

#!/usr/bin/env bash
# The release: builds the image for each platform, pushes them and one OCI image index, attaches a
# signed SPDX SBOM of each platform's image, signs the index and every image in it, then packages the
# chart with its image defaulting to that registry path and pushes it as an OCI artifact.
#
#   npm run release -- --registry=<host[:port]/path> [--version=<v>] [--platforms=linux/amd64,linux/arm64]
#                      [--plain-http] [--key=<cosign.key>] [--overwrite]
#
# The version is package.json's: --version must equal it when given (a release tag checks itself
# against the tree). Pushes:
#   <registry>/node-problem-detector:<v>           the image index (one image per platform)
#   <registry>/charts/node-problem-detector:<v>    the chart (helm install oci://<registry>/charts/...)
# --key: a cosign private key (COSIGN_PASSWORD in the environment); without it nothing is signed or
# attested, and the release says so. --plain-http: the registry speaks HTTP (a registry on 127.0.0.1).
# A version is published once: when the image tag or the chart version exists in the registry already,
# the release refuses (exit 2) before building anything, unless --overwrite says to replace it. What is
# signed and attested is what this run pushed, by the digests the pushes returned: the tag is never read
# back, so a concurrent push to it cannot be signed in its place.
# REGISTRY_USERNAME and REGISTRY_PASSWORD, when set, log crane (whose docker config cosign and syft
# read too) and helm in to the registry's host first. The tools come from test/tools/release-tools/build.sh and test/tools/go-tools.sh (helm).
# --krew-uri-base=<url> (default on the forge: its release of the tag): where the kubectl plugin's archive
# will be downloaded from; the archive and its krew manifest are written to dist/release/.
# Prints REF=, DIGEST=, CHART= (and KREW_ARCHIVE=, KREW_MANIFEST=) for scripts on stdout; progress on stderr.
set -euo pipefail
export LC_ALL=C
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[release %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'release: %s\n' "$*" >&2; exit 2; }

registry="" version="" platforms="linux/amd64,linux/arm64" plain_http="" key="" overwrite="" krew_uri_base=""
for arg in "$@"; do
  case "$arg" in
    --registry=*) registry="${arg#*=}" ;;
    --version=*) version="${arg#*=}" ;;
    --platforms=*) platforms="${arg#*=}" ;;
    --plain-http) plain_http=1 ;;
    --key=*) key="${arg#*=}" ;;
    --overwrite) overwrite=1 ;;
    --krew-uri-base=*) krew_uri_base="${arg#*=}" ;;
    *) die "unknown argument $arg (usage: --registry=<host[:port]/path> [--version=<v>] [--platforms=...] [--plain-http] [--key=<file>] [--overwrite] [--krew-uri-base=<url>])" ;;
  esac
done
[ -n "$registry" ] || die "--registry=<host[:port]/path> is required"
registry="${registry%/}"
[[ "$registry" =~ ^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._/-]+)?$ ]] || die "--registry=$registry: not host[:port]/path"
tree_version="$(node -p 'require(process.argv[1]).version' "$repo/package.json")"
[ -z "$version" ] || [ "$version" = "$tree_version" ] \
  || die "--version=$version: package.json says $tree_version; the version is set there, in one place"
version="$tree_version"
[ -z "$key" ] || [ -f "$key" ] || die "--key=$key: no such file"

eval "$(bash "$repo/test/tools/release-tools/build.sh")"
eval "$(bash "$repo/test/tools/go-tools.sh" | grep '^HELM=')"
image="$registry/node-problem-detector"
ref="$image:$version"
insecure=() cosign_http=() helm_http=()
if [ -n "$plain_http" ]; then
  insecure=(--insecure) cosign_http=(--allow-http-registry --allow-insecure-registry) helm_http=(--plain-http)
  export SYFT_REGISTRY_INSECURE_USE_HTTP=true
fi

if [ -n "${REGISTRY_USERNAME:-}" ]; then
  host="${registry%%/*}"
  printf '%s' "${REGISTRY_PASSWORD:?REGISTRY_PASSWORD is needed with REGISTRY_USERNAME}" \
    | "$CRANE" auth login "$host" -u "$REGISTRY_USERNAME" --password-stdin >&2
  printf '%s' "$REGISTRY_PASSWORD" | "$HELM" registry login "$host" -u "$REGISTRY_USERNAME" --password-stdin >&2
fi

# Refuses a reference that exists already (unless --overwrite); an answer other than "not found" (no
# access, no network) is no proof that it is new, so it stops the release too.
refuse_existing() {
  local what="$1" at="$2" found err
  err="$(mktemp)"
  if found="$("$CRANE" digest "${insecure[@]}" "$at" 2>"$err")"; then
    rm -f "$err"
    [ -n "$overwrite" ] || die "$what $at exists already ($found): a version is published once; --overwrite replaces it"
    log "--overwrite: replacing $what $at (was $found)"
  elif grep -qE 'MANIFEST_UNKNOWN|NAME_UNKNOWN|NOT_FOUND|404' "$err"; then
    rm -f "$err"
  else
    die "cannot tell whether $what $at exists: $(tr '\n' ' ' <"$err" | head -c 400)"
  fi
}
digest_ok() { [[ "$1" =~ ^sha256:[0-9a-f]{64}$ ]] || die "$2 returned no digest (got '$1')"; }
refuse_existing image "$ref"
refuse_existing chart "$registry/charts/node-problem-detector:$version"

# One image per platform, pushed by digest; the index lists them. Each digest is the push's own.
index_args=() plat_digests=()
IFS=, read -r -a plats <<<"$platforms"
for p in "${plats[@]}"; do
  local_tag="localhost/node-problem-detector:$version-${p//\//-}"
  log "building $p as $local_tag"
  NPD_PLATFORM="$p" bash "$repo/test/container/build-image.sh" "$local_tag" >&2
  layout="$(mktemp -d)"
  skopeo copy --quiet --dest-compress-format gzip "containers-storage:$local_tag" "oci:$layout:img" >&2
  digest="$("$CRANE" push "${insecure[@]}" "$layout" "$image" 2>/dev/null | sed 's/.*@//')"
  rm -rf "$layout"
  digest_ok "$digest" "crane push ($p)"
  plat_digests+=("$digest")
  log "pushed $p: $image@$digest"
  index_args+=(-m "$image@$digest")
done
# Checked again just before the tag is written: the build took minutes.
refuse_existing image "$ref"
# crane index append prints <image>@<digest> of the index it wrote: that digest is signed below.
index_digest="$("$CRANE" index append "${insecure[@]}" "${index_args[@]}" -t "$ref" | sed 's/.*@//')"
digest_ok "$index_digest" "crane index append"
log "pushed the index $ref@$index_digest"

if [ -n "$key" ]; then
  for i in "${!plats[@]}"; do
    p="${plats[$i]}" d="${plat_digests[$i]}"
    sbom="$(mktemp)"
    "$SYFT" scan --quiet "registry:$image@$d" -o "spdx-json=$sbom"
    # The SBOM as a signed in-toto attestation: `cosign verify-attestation` proves who attached it.
    "$COSIGN" attest --yes --tlog-upload=false "${cosign_http[@]}" --key "$key" --type spdxjson \
      --predicate "$sbom" "$image@$d" >&2
    rm -f "$sbom"
    log "SBOM of $p attested on $image@$d"
  done
  "$COSIGN" sign --yes --recursive --tlog-upload=false "${cosign_http[@]}" --key "$key" "$image@$index_digest" >&2
  log "signed $image@$index_digest and each platform's image"
else
  log "no --key: the images are neither signed nor given an SBOM attestation"
fi

chart_dir="$(mktemp -d)"
trap 'rm -rf "$chart_dir"' EXIT
cp -a "$repo/deploy/helm/node-problem-detector" "$chart_dir/"
# The packaged chart's image defaults to the registry just pushed to; the tag is the appVersion.
sed -i "s#^  repository: node-problem-detector\$#  repository: $image#" "$chart_dir/node-problem-detector/values.yaml"
grep -q "^  repository: $image\$" "$chart_dir/node-problem-detector/values.yaml" \
  || die "deploy/helm/node-problem-detector/values.yaml: image.repository is not the default this script rewrites"
"$HELM" package --version "$version" --app-version "$version" -d "$chart_dir" "$chart_dir/node-problem-detector" >&2
refuse_existing chart "$registry/charts/node-problem-detector:$version"
"$HELM" push "${helm_http[@]}" "$chart_dir/node-problem-detector-$version.tgz" "oci://$registry/charts" >&2
log "pushed the chart oci://$registry/charts/node-problem-detector:$version"

# The kubectl plugin (`kubectl npd`) for krew: an archive and its manifest in dist/release/, for the
# place the archive is published (the release workflow uploads both to the forge's release of the tag).
krew_uri_base="${krew_uri_base:-${GITHUB_REPOSITORY:+https://github.com/$GITHUB_REPOSITORY/releases/download/v$version}}"
krew_vars=""
if [ -n "$krew_uri_base" ]; then
  krew_vars="$(bash "$repo/deploy/krew/package.sh" --version="$version" --out="$repo/dist/release" --uri-base="$krew_uri_base")"
  log "packaged the kubectl plugin for krew: $krew_uri_base/kubectl-npd-$version.tar.gz"
else
  log "no --krew-uri-base (nor GITHUB_REPOSITORY): the kubectl plugin is not packaged"
fi
echo "REF=$ref"
echo "DIGEST=$index_digest"
echo "CHART=oci://$registry/charts/node-problem-detector"
[ -z "$krew_vars" ] || echo "$krew_vars"

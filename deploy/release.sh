#!/usr/bin/env bash
# The release: builds the image for each platform, pushes them and one OCI image index, attaches a
# signed SPDX SBOM of each platform's image, signs the index and every image in it, then packages the
# chart with its image defaulting to that registry path and pushes it as an OCI artifact.
#
#   npm run release -- --registry=<host[:port]/path> [--version=<v>] [--platforms=linux/amd64,linux/arm64]
#                      [--plain-http] [--key=<cosign.key>]
#
# The version is package.json's: --version must equal it when given (a release tag checks itself
# against the tree). Pushes:
#   <registry>/node-problem-detector:<v>           the image index (one image per platform)
#   <registry>/charts/node-problem-detector:<v>    the chart (helm install oci://<registry>/charts/...)
# --key: a cosign private key (COSIGN_PASSWORD in the environment); without it nothing is signed or
# attested, and the release says so. --plain-http: the registry speaks HTTP (a registry on 127.0.0.1).
# REGISTRY_USERNAME and REGISTRY_PASSWORD, when set, log crane (whose docker config cosign and syft
# read too) and helm in to the registry's host first. The tools come from test/tools/release-tools/build.sh and test/tools/go-tools.sh (helm).
# Prints REF=, DIGEST=, CHART= for scripts on stdout; progress on stderr.
set -euo pipefail
export LC_ALL=C
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
log() { printf '[release %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { printf 'release: %s\n' "$*" >&2; exit 2; }

registry="" version="" platforms="linux/amd64,linux/arm64" plain_http="" key=""
for arg in "$@"; do
  case "$arg" in
    --registry=*) registry="${arg#*=}" ;;
    --version=*) version="${arg#*=}" ;;
    --platforms=*) platforms="${arg#*=}" ;;
    --plain-http) plain_http=1 ;;
    --key=*) key="${arg#*=}" ;;
    *) die "unknown argument $arg (usage: --registry=<host[:port]/path> [--version=<v>] [--platforms=...] [--plain-http] [--key=<file>])" ;;
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

# One image per platform, pushed by digest; the index lists them.
index_args=()
IFS=, read -r -a plats <<<"$platforms"
for p in "${plats[@]}"; do
  local_tag="localhost/node-problem-detector:$version-${p//\//-}"
  log "building $p as $local_tag"
  NPD_PLATFORM="$p" bash "$repo/test/container/build-image.sh" "$local_tag" >&2
  layout="$(mktemp -d)"
  skopeo copy --quiet --dest-compress-format gzip "containers-storage:$local_tag" "oci:$layout:img" >&2
  digest="$("$CRANE" push "${insecure[@]}" "$layout" "$image" 2>/dev/null | sed 's/.*@//')"
  rm -rf "$layout"
  log "pushed $p: $image@$digest"
  index_args+=(-m "$image@$digest")
done
"$CRANE" index append "${insecure[@]}" "${index_args[@]}" -t "$ref" >&2
index_digest="$("$CRANE" digest "${insecure[@]}" "$ref")"
log "pushed the index $ref@$index_digest"

if [ -n "$key" ]; then
  for p in "${plats[@]}"; do
    d="$("$CRANE" digest "${insecure[@]}" --platform "$p" "$ref")"
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
"$HELM" push "${helm_http[@]}" "$chart_dir/node-problem-detector-$version.tgz" "oci://$registry/charts" >&2
log "pushed the chart oci://$registry/charts/node-problem-detector:$version"
echo "REF=$ref"
echo "DIGEST=$index_digest"
echo "CHART=oci://$registry/charts/node-problem-detector"

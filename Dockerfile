# syntax=docker/dockerfile:1
#
# node-problem-detector image: the Node 24 binary with the bundled agent (dist/main.js), its production
# dependencies, the shipped rules, tini as PID 1 and journalctl for the journald monitors, on only the
# Debian bookworm files they need (no package manager, /bin/sh is dash).
#
#   docker build -t node-problem-detector:0.1.0 \
#     --build-arg GIT_COMMIT="$(git rev-parse --short=12 HEAD)" --build-arg BUILD_DATE="$(date -u +%FT%TZ)" .
#
# Base images are pinned by exact version tag. They are not pinned by @sha256 digest because digests
# cannot be resolved on the offline build machines where this file is maintained; a release pipeline
# with registry access should add the digests (`docker buildx imagetools inspect node:<tag>`).
# CI builds this file unchanged on base images it makes itself: test/container/build-image.sh.
# NODE_VERSION matches .ci/node24.sh (test/deploy/dockerfile.test.ts checks it).
ARG NODE_VERSION=24.22.3
# The runtime's files come from this Debian image of the target platform (on a public registry the name
# is a multi-arch index; test/container/build-image.sh passes a local image per platform).
ARG DEBIAN_SLIM=debian:bookworm-slim

# ---- build: compile the bundle and the production node_modules ----------------------------------
# On the builder's own platform for every target: the bundle is plain JavaScript, and an arm64 image
# cross-compiles its native addon (re2) instead of compiling it under emulation (minutes vs an hour).
FROM --platform=$BUILDPLATFORM node:${NODE_VERSION}-bookworm AS build
# Native addons build with node-gyp when no prebuilt binary can be downloaded (re2 offline). The full
# bookworm image already has the toolchain; listing it keeps a switch to -slim working.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# Dependencies' install scripts run as the image's unprivileged "node" user, not as root.
WORKDIR /build
RUN chown node:node /build
USER node
# node-gyp finds the headers the node images ship instead of downloading them (offline builds).
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false \
    npm_config_nodedir=/usr/local
COPY --chown=node:node package.json package-lock.json ./
# Compiles re2 once; the production tree below is pruned from a copy of this one.
RUN --mount=type=cache,target=/home/node/.npm,uid=1000,gid=1000 npm ci
# ---- from here on the layers depend on the target platform; those above are shared by all ----
# A cross build adds the target's gcc and binutils (Debian's cross compilers) and takes the target's
# Node binary from the npm package node-linux-<arch>. The stripped Node binary is what the runtime
# stage runs (the release binary carries debug symbols). /opt/cross holds the tool prefix, "" when
# the target is the builder's own platform.
USER root
ARG NODE_VERSION
ARG TARGETARCH
RUN set -eu; host="$(dpkg --print-architecture)"; \
  case "$host-$TARGETARCH" in \
    amd64-amd64|arm64-arm64) cross="" ;; \
    amd64-arm64) cross=aarch64-linux-gnu-; pkgs="g++-aarch64-linux-gnu binutils-aarch64-linux-gnu" ;; \
    arm64-amd64) cross=x86_64-linux-gnu-; pkgs="g++-x86-64-linux-gnu binutils-x86-64-linux-gnu" ;; \
    *) echo "cannot build for TARGETARCH=$TARGETARCH on $host" >&2; exit 1 ;; \
  esac; \
  node=/usr/local/bin/node; \
  if [ -n "$cross" ]; then \
    apt-get update; apt-get install -y --no-install-recommends $pkgs; rm -rf /var/lib/apt/lists/*; \
    cd /tmp && tar -xzf "$(npm pack --silent "node-linux-$TARGETARCH@$NODE_VERSION")" package/bin/node; \
    node=/tmp/package/bin/node; \
  fi; \
  "${cross}strip" --strip-unneeded -o /opt/node "$node"; \
  rm -rf /tmp/package /tmp/node-linux-*.tgz; printf '%s' "$cross" >/opt/cross
USER node
# Production dependencies in /build/prod without:
# - @kubernetes/client-node (65 MB with its dependencies): only exec and auth-provider kubeconfigs load
#   it, never a pod with in-cluster config; the agent says how to add it when such a kubeconfig needs it;
# - re2's compiler objects and C++ sources (96 MB), and the addon's symbols.
# - for a cross build, koffi's prebuilt addon of the target (@koromix/koffi-linux-<arch>) in place of
#   the builder's, and re2 compiled again with the target's compiler.
RUN cross="$(cat /opt/cross)" \
 && mkdir prod \
 && cp -a package.json package-lock.json node_modules prod/ \
 && cd prod \
 && npm pkg delete 'dependencies.@kubernetes/client-node' \
 && npm prune --omit=dev --offline \
 && if [ -n "$cross" ]; then \
      npm install --omit=dev --cpu="$TARGETARCH" --os=linux --ignore-scripts \
      && (cd node_modules/re2 && CC="${cross}gcc" CXX="${cross}g++" \
          node /usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild --arch="$TARGETARCH" -j max); \
    fi \
 && "${cross}strip" --strip-unneeded node_modules/re2/build/Release/re2.node \
 && mv node_modules/re2/build/Release/re2.node /tmp/re2.node \
 && rm -rf node_modules/re2/build node_modules/re2/vendor \
 && mkdir -p node_modules/re2/build/Release \
 && mv /tmp/re2.node node_modules/re2/build/Release/re2.node
COPY --chown=node:node tsconfig.json ./
COPY --chown=node:node src ./src
COPY --chown=node:node test/tools/build.ts ./test/tools/build.ts
# What `--version` prints, as NPD's does (test/tools/build.ts bakes them into the bundle).
ARG GIT_COMMIT=
ARG BUILD_DATE=
RUN NPD_GIT_COMMIT="$GIT_COMMIT" NPD_BUILD_DATE="$BUILD_DATE" npm run build

# ---- rootfs: the runtime's files, picked from Debian packages ------------------------------------
# A whole bookworm-slim base (29 MiB gzip) plus the Node binary (41 MiB) is already over the image
# budget (docs/install.md, Size), so the runtime is a scratch image with only what the agent runs: the
# dynamic loader and the libraries of node, journalctl, tini and sh (found with ldd), and tzdata.
FROM ${DEBIAN_SLIM} AS rootfs
# tini: PID 1 that forwards SIGTERM and reaps orphaned plugin descendants (npd_zombie_processes).
# journalctl (from the systemd package, with the library it links) for the journald monitors; nothing
# else of systemd, which never runs in the container. tzdata: local-time timestamps in log files.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini tzdata libsystemd-shared \
 && cd /tmp && apt-get download systemd \
 && dpkg-deb -x systemd_*.deb /tmp/systemd \
 && install -m 0755 "$(find /tmp/systemd -path '*bin/journalctl')" /usr/bin/journalctl \
 && rm -rf /tmp/systemd /tmp/systemd_*.deb /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && journalctl --version
COPY --from=build /opt/node /usr/local/bin/node
# Paths as merged-/usr Debian has them (/lib -> usr/lib): each library and the symlink that names it.
# /etc/localtime is a real file, so the DaemonSet can mount the host's over it (a symlink would
# redirect that mount into /usr/share/zoneinfo).
RUN set -eu; r=/rootfs; mkdir -p $r/usr/bin $r/usr/lib $r/usr/lib64 $r/usr/sbin $r/etc $r/tmp $r/usr/share; \
  for d in bin lib lib64 sbin; do ln -s usr/$d $r/$d; done; chmod 1777 $r/tmp; \
  bins="/usr/bin/journalctl /usr/bin/tini /usr/bin/dash"; \
  for f in $bins $(ldd /usr/local/bin/node $bins | grep -o '/[^ :]*' | grep -v '^/usr/local/bin/node$' | sort -u); do \
    f=$(echo "$f" | sed -E 's#^/(lib|lib64|bin|sbin)/#/usr/\1/#'); \
    cp -a --parents "$f" $r; cp -a --parents "$(readlink -f "$f")" $r; \
  done; \
  ln -s dash $r/usr/bin/sh; \
  cp -a /usr/share/zoneinfo $r/usr/share/; cp /usr/share/zoneinfo/Etc/UTC $r/etc/localtime; \
  cp -a /etc/passwd /etc/group /etc/nsswitch.conf $r/etc/; \
  echo 'node:x:1000:1000::/nonexistent:/usr/sbin/nologin' >>$r/etc/passwd; echo 'node:x:1000:' >>$r/etc/group; \
  cp /usr/local/bin/node $r/usr/local-node && chroot $r /usr/local-node -e 0 && rm $r/usr/local-node; \
  chroot $r /usr/bin/journalctl --version >/dev/null && chroot $r /usr/bin/sh -c true

# ---- runtime -------------------------------------------------------------------------------------
FROM scratch AS runtime
COPY --from=rootfs /rootfs/ /
COPY --from=build /opt/node /usr/local/bin/node
ENV NODE_ENV=production PATH=/usr/local/bin:/usr/bin
WORKDIR /app
COPY --from=build /build/prod/package.json ./package.json
COPY --from=build /build/prod/node_modules ./node_modules
COPY --from=build /build/dist ./dist
COPY rules ./rules
# Non-root by default. The DaemonSet runs it privileged, the one way a container reads the host's
# /dev/kmsg on every runtime: see docs/install.md.
USER 1000:1000
EXPOSE 20256 20257
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz (deploy/base/daemonset.yaml).
# --disable-sigusr1: SIGUSR1 would otherwise open a V8 inspector on the node's loopback (hostNetwork).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--disable-sigusr1", "/app/dist/main.js"]

# syntax=docker/dockerfile:1
#
# node-problem-detector image: a Node 24 runtime with the bundled agent (dist/main.js), its production
# dependencies, the shipped rules, tini as PID 1 and journalctl for the journald monitors.
#
#   docker build -t node-problem-detector:0.1.0 .
#
# Base images are pinned by exact version tag. They are not pinned by @sha256 digest because digests
# cannot be resolved on the offline build machines where this file is maintained; a release pipeline
# with registry access should add the digests (`docker buildx imagetools inspect node:<tag>`).
# NODE_VERSION matches .ci/node24.sh (test/deploy/dockerfile.test.ts checks it).
ARG NODE_VERSION=24.22.3

# ---- build: compile the bundle, then keep production dependencies only ------------------------------
FROM node:${NODE_VERSION}-bookworm AS build
# Native addons build with node-gyp when no prebuilt binary fits (koffi ships prebuilds; this is the
# fallback). The full bookworm image already has them; listing them keeps a switch to -slim working.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
# Dependencies' install scripts run as the image's unprivileged "node" user, not as root.
WORKDIR /build
RUN chown node:node /build
USER node
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY --chown=node:node package.json package-lock.json ./
RUN --mount=type=cache,target=/home/node/.npm,uid=1000,gid=1000 npm ci
COPY --chown=node:node tsconfig.json ./
COPY --chown=node:node src ./src
COPY --chown=node:node test/tools/build.ts ./test/tools/build.ts
RUN npm run build
# A fresh install without devDependencies replaces node_modules (npm ci removes it first).
RUN --mount=type=cache,target=/home/node/.npm,uid=1000,gid=1000 npm ci --omit=dev

# ---- runtime -------------------------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# tini: PID 1 that forwards SIGTERM and reaps orphaned plugin descendants (npd_zombie_processes).
# systemd: only for journalctl, which the journald monitors run (no systemd runs in the container).
# /etc/localtime becomes a real file, so the DaemonSet can mount the host's over it (a symlink would
# redirect that mount into /usr/share/zoneinfo).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini systemd tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && cp --remove-destination /usr/share/zoneinfo/Etc/UTC /etc/localtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /build/package.json ./package.json
COPY --from=build /build/node_modules ./node_modules
COPY --from=build /build/dist ./dist
COPY rules ./rules
# Non-root by default (the image's "node" user). The DaemonSet runs it as uid 0 with every capability
# dropped but SYSLOG, because host journal and log files are root-owned: see docs/install.md.
USER 1000:1000
EXPOSE 20256 20257
# No HEALTHCHECK: Kubernetes probes /healthz and /readyz (deploy/base/daemonset.yaml).
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/dist/main.js"]

#!/usr/bin/env bash
# What the node suite needs on the machine, installed when missing: Debian's containerd, runc, CNI
# plugins (bridge, host-local, loopback) and D-Bus, and the agent image (test/container/build-image.sh,
# which also installs buildah and podman). The Kubernetes binaries come from test/e2e/controlplane/build.sh
# and helm from test/tools/go-tools.sh, both run by the suite (cached).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
need=()
for f in /usr/bin/containerd:containerd /usr/sbin/runc:runc /usr/lib/cni/bridge:containernetworking-plugins \
  /usr/bin/dbus-daemon:dbus; do
  [ -e "${f%%:*}" ] || need+=("${f#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "test/node/setup.sh: needs ${need[*]} (root and apt-get install them)" >&2
    exit 1
  fi
  echo "test/node/setup.sh: installing ${need[*]} from Debian" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
bash "$repo/test/container/build-image.sh"

#!/bin/sh
# test:gpu on a GPU machine the repository was copied to with .cache/gpu-kit and no node_modules (the device
# tool: carry [".cache/gpu-kit"]). Build the kit where node_modules is, with Node packed in when the GPU
# machine has no Node 24:  node --import tsx test/gpu/kit.ts --with-node
# Then, there:  sh test/gpu/device.sh [run.ts options]
set -eu
cd "$(dirname "$0")/../.."
node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }
node=node
if ! command -v node >/dev/null 2>&1 || [ "$(node_major node)" -lt 24 ]; then
  [ -f .cache/gpu-kit/node.xz ] || { echo "device.sh: no Node 24 here and no .cache/gpu-kit/node.xz" >&2; exit 1; }
  node="${TMPDIR:-/tmp}/npd-test-gpu-node"
  python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
    .cache/gpu-kit/node.xz "$node"
  chmod +x "$node"
fi
exec "$node" test/gpu/run.ts --no-build "$@"

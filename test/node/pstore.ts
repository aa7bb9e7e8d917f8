/**
 * A crash dump on the node, as the kernel's pstore file system shows one after a panic: a tmpfs over the
 * host's /sys/fs/pstore holding test/fixtures/pstore/panic, for the pstore component's hostPath to
 * mount. /sys/fs/pstore exists on kernels with CONFIG_PSTORE (this machine's has it, unmounted).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { run } from '../e2e/harness/processes.ts';
import { REPO } from './support.ts';

const PSTORE = '/sys/fs/pstore';
const TAG = 'npd-test-pstore';
const FIXTURE = path.join(REPO, 'test/fixtures/pstore/panic');

const mounted = () => fs.readFileSync('/proc/self/mounts', 'utf8').includes(`${TAG} ${PSTORE} `);

async function unmount(): Promise<void> {
  while (mounted()) {
    const r = await run('umount', ['-l', PSTORE]);
    if (r.code !== 0) throw new Error(`umount ${PSTORE}: ${r.stderr}`);
  }
}

/** Runs `fn` with the fixture panic dump in the host's /sys/fs/pstore, removed afterwards. */
export async function withPstorePanic<T>(fn: () => Promise<T>): Promise<T> {
  if (!fs.existsSync(PSTORE)) throw new Error(`${PSTORE} is missing: this kernel has no pstore`);
  await unmount(); // a killed earlier run's
  const r = await run('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0750', TAG, PSTORE]);
  if (r.code !== 0) throw new Error(`mount tmpfs on ${PSTORE}: ${r.stderr}`);
  try {
    for (const f of fs.readdirSync(FIXTURE)) fs.copyFileSync(path.join(FIXTURE, f), path.join(PSTORE, f));
    return await fn();
  } finally {
    await unmount();
  }
}

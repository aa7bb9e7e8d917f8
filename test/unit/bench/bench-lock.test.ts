import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flockHolders } from '../../bench/bench-lock.ts';

// /proc/locks as Linux prints it (fs/locks.c, lock_get_status): a holder, a waiter ("->") behind it,
// a POSIX lock and a flock on another inode.
const PROC_LOCKS = [
  '1: FLOCK  ADVISORY  WRITE 4242 fe:00:9977943 0 EOF',
  '1: -> FLOCK  ADVISORY  WRITE 5151 fe:00:9977943 0 EOF',
  '2: POSIX  ADVISORY  WRITE 777 00:1a:9977943 0 EOF',
  '3: FLOCK  ADVISORY  WRITE 888 fe:00:12345 0 EOF',
  '',
].join('\n');

describe('kmsg bench lock', () => {
  it('finds the process holding a flock on the inode, not its waiters nor POSIX locks', () => {
    assert.deepEqual(flockHolders(PROC_LOCKS, 9977943), [4242]);
    assert.deepEqual(flockHolders(PROC_LOCKS, 12345), [888]);
  });

  it('finds no holder of a file nobody locked', () => {
    assert.deepEqual(flockHolders(PROC_LOCKS, 1), []);
    assert.deepEqual(flockHolders('', 9977943), []);
  });
});

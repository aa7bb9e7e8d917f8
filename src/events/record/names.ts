import { randomUUID } from 'node:crypto';
import type { Clock } from '../../core/clock.ts';

/** Strictly increasing nanoseconds since the epoch. */
export type NanoSource = () => bigint;

/**
 * Go names events after UnixNano; JavaScript's wall clock has millisecond resolution, so two events in one
 * millisecond would share a name and the second would be lost to a 409 AlreadyExists. This anchors the
 * monotonic clock to the wall clock once and, should two readings still coincide, bumps by one. Share one
 * source between every recorder and aggregator that names events after the same object.
 */
export function monotonicNanos(clock: Clock): NanoSource {
  const wallAnchor = BigInt(clock.now()) * 1_000_000n;
  const hrAnchor = clock.hrtime();
  let last = -1n;
  return () => {
    let next = wallAnchor + (clock.hrtime() - hrAnchor);
    if (next <= last) next = last + 1n;
    last = next;
    return next;
  };
}

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL}(\\.${DNS1123_LABEL})*$`);

export function isDns1123Subdomain(value: string): boolean {
  return value.length <= 253 && DNS1123_SUBDOMAIN.test(value);
}

/** `<name>.<lowercase hex nanos>`, or a random UUID when that is not a valid object name (client-go ≥ 0.33). */
export function generateEventName(refName: string, nanos: bigint, uuid: () => string = randomUUID): string {
  const name = `${refName}.${nanos.toString(16)}`;
  return isDns1123Subdomain(name) ? name : uuid();
}

import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

/**
 * Loads a Node built-in on first use. A static import of http2, dgram, https or child_process costs
 * RSS on every node even when no configured monitor needs it (measured: about 14 MiB for the set).
 */
export function builtin<T>(name: 'node:http2' | 'node:dgram' | 'node:https' | 'node:child_process'): T {
  return load(name) as T;
}

/** Readers for untyped API JSON: a missing or mistyped field reads as empty, never throws. */
export type Json = Record<string, unknown>;

export const obj = (v: unknown): Json =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {};
export const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj) : []);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const strings = (v: unknown): Record<string, string> =>
  Object.fromEntries(Object.entries(obj(v)).filter((e): e is [string, string] => typeof e[1] === 'string'));

import type { FlagSpec } from '../config/flag-parser.ts';

/** Flag declarations, by kind; the default is shown in --help. */
export const S = (name: string, help: string, def = ''): FlagSpec => ({
  name,
  kind: 'string',
  help,
  default: def,
});
export const B = (name: string, help: string, def: boolean): FlagSpec => ({
  name,
  kind: 'bool',
  help,
  default: String(def),
});
export const L = (name: string, help: string): FlagSpec => ({ name, kind: 'list', help });
export const D = (name: string, help: string, def: string): FlagSpec => ({
  name,
  kind: 'duration',
  help,
  default: def,
});
export const I = (name: string, help: string, def: number): FlagSpec => ({
  name,
  kind: 'int',
  help,
  default: String(def),
});
export const IGNORED = (name: string, kind: FlagSpec['kind'], help: string): FlagSpec => ({
  name,
  kind,
  help,
  ignored: true,
});

/** Typed reads of the parsed flags; each bad value adds to `errors`, in the order it is read. */
export interface FlagReader {
  readonly errors: string[];
  get(name: string): string;
  list(name: string): string[];
  num(name: string): number;
  dur(name: string): number;
}

/**
 * A pflag-compatible command-line parser: `--name=value`, `--name value`, booleans as `--name`,
 * `--name=true|false`, and comma-separated, repeatable lists. NPD users' DaemonSet args work unchanged.
 */
export type FlagKind = 'string' | 'bool' | 'int' | 'float' | 'list' | 'duration';

export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly help: string;
  readonly default?: string;
  /** Accepted for compatibility and otherwise ignored (klog's flags, for example). */
  readonly ignored?: boolean;
}

export interface ParsedFlags {
  readonly values: ReadonlyMap<string, string | string[]>;
  readonly positional: readonly string[];
  readonly errors: readonly string[];
}

export function parseFlags(argv: readonly string[], specs: readonly FlagSpec[]): ParsedFlags {
  const byName = new Map(specs.map((s) => [s.name, s]));
  const values = new Map<string, string | string[]>();
  const positional: string[] = [];
  const errors: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const [rawName, inline] = splitFlag(arg);
    const spec = byName.get(rawName);
    if (!spec) {
      errors.push(`unknown flag: --${rawName}`);
      continue;
    }
    let value = inline;
    if (value === undefined && spec.kind !== 'bool') {
      value = argv[i + 1];
      i++;
      if (value === undefined) {
        errors.push(`flag needs an argument: --${rawName}`);
        continue;
      }
    }
    store(values, spec, value ?? 'true', errors);
  }
  return { values, positional, errors };
}

function splitFlag(arg: string): [string, string | undefined] {
  const body = arg.replace(/^--?/, '');
  const eq = body.indexOf('=');
  return eq < 0 ? [body, undefined] : [body.slice(0, eq), body.slice(eq + 1)];
}

function store(values: Map<string, string | string[]>, spec: FlagSpec, value: string, errors: string[]): void {
  if (spec.kind === 'bool' && value !== 'true' && value !== 'false') {
    errors.push(`invalid argument "${value}" for --${spec.name}: expected true or false`);
    return;
  }
  if (spec.kind === 'list') {
    const prev = values.get(spec.name);
    const items = value.split(',').filter((s) => s !== '');
    values.set(spec.name, [...(Array.isArray(prev) ? prev : []), ...items]);
    return;
  }
  values.set(spec.name, value);
}

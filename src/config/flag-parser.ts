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

/** strconv.ParseBool's spellings, which pflag accepts. */
const GO_BOOLS: Readonly<Record<string, string>> = {
  1: 'true',
  t: 'true',
  T: 'true',
  TRUE: 'true',
  true: 'true',
  True: 'true',
  0: 'false',
  f: 'false',
  F: 'false',
  FALSE: 'false',
  false: 'false',
  False: 'false',
};

function store(values: Map<string, string | string[]>, spec: FlagSpec, raw: string, errors: string[]): void {
  let value = raw;
  if (spec.kind === 'bool') {
    const normalised = GO_BOOLS[raw];
    if (normalised === undefined) {
      errors.push(`invalid argument "${raw}" for --${spec.name}: expected a boolean`);
      return;
    }
    value = normalised;
  }
  if (spec.kind === 'int' && !/^-?\d+$/.test(value)) {
    errors.push(`invalid argument "${raw}" for --${spec.name}: expected an integer`);
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

import RE2 from 're2';
import type { PatternMatch } from './pattern.ts';

/**
 * Go's Regexp.Expand syntax for reasons and messages built from capture groups (NPD #1067): `$1`,
 * `${1}`, `$name`, `${name}`, and `$$` for a literal dollar. As in Go, `$1x` names the group "1x";
 * write `${1}x` to follow a group with text.
 */
const REFERENCE = /\$(?:\$|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))/g;

export function isTemplate(text: string): boolean {
  return text.includes('$');
}

export function expandTemplate(template: string, match: PatternMatch): string {
  return template.replace(REFERENCE, (whole, braced: string | undefined, bare: string | undefined) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare) as string;
    const value = /^\d+$/.test(name) ? match.groups[Number(name)] : match.named[name];
    return value ?? '';
  });
}

/** The template with every reference replaced by `Other`: `Xid${1}` gives `XidOther`. */
export function catchAllReason(template: string): string {
  return template.replace(REFERENCE, (whole) => (whole === '$$' ? '$' : 'Other'));
}

/** The references a template makes that the pattern cannot fill, for config validation. */
export function unknownReferences(template: string, pattern: string): string[] {
  const shape = groupShape(pattern);
  if (!shape) return [];
  const out: string[] = [];
  for (const m of template.matchAll(REFERENCE)) {
    if (m[0] === '$$') continue;
    const name = (m[1] ?? m[2]) as string;
    const known = /^\d+$/.test(name) ? Number(name) <= shape.count : shape.names.includes(name);
    if (!known) out.push(m[0]);
  }
  return out;
}

/** Group count and names, read from a match of the empty alternative. */
function groupShape(pattern: string): { count: number; names: string[] } | undefined {
  try {
    const m = new RE2(`(?:${pattern})|`).exec('');
    if (!m) return undefined;
    return { count: m.length - 1, names: Object.keys(m.groups ?? {}) };
  } catch {
    return undefined;
  }
}

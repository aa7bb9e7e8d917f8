/**
 * A rule's reason as a test of reported reasons: a plain reason matches itself, a templated one (`$1`,
 * `${name}`, as rules/template.ts expands them from capture groups) matches any expansion.
 */
export function reasonMatcher(reason: string): (reason: string) => boolean {
  const parts = reason.split(REFERENCE);
  if (parts.length === 1) return (r) => r === reason;
  const re = new RegExp(`^${parts.map(escapeRegExp).join('.*')}$`);
  return (r) => re.test(r);
}

const REFERENCE = /\$(?:\{[A-Za-z0-9_]+\}|[A-Za-z0-9_]+)/;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

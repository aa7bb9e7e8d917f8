/**
 * Credentials that can show up in log lines or mount options, masked before anything enters a bundle.
 * Nothing that holds secrets is ever read (environment, kubeconfig, service-account token); this is the
 * second line of defence for secrets that daemons themselves print.
 */
const MASK = '[REDACTED]';

const RULES: readonly { readonly pattern: RegExp; readonly replace: (...groups: string[]) => string }[] = [
  // "Authorization: Bearer abc", "authorization=Basic abc", also in JSON ("Authorization":"Bearer abc").
  {
    pattern: /\b((?:proxy-)?authorization"?\s*[:=]\s*"?)(?:(bearer|basic|negotiate|token)\s+)?[^\s"',;]+/gi,
    replace: (_m, key, scheme) => `${key}${scheme ? `${scheme} ` : ''}${MASK}`,
  },
  { pattern: /\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, replace: (_m, key) => `${key}${MASK}` },
  // key=value and key: value for the usual names (cifs password=, --token=, client_secret: ...).
  {
    pattern:
      /\b([\w.-]*(?:token|password|passwd|secret|api[_-]?key|access[_-]?key|credentials?)"?\s*[:=]\s*"?)[^\s"',;&]+/gi,
    replace: (_m, key) => `${key}${MASK}`,
  },
  // JSON Web Tokens (service-account tokens among them), wherever they appear.
  { pattern: /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, replace: () => MASK },
  // Presigned URL signatures (S3 SigV4, Azure SAS, GCS).
  {
    pattern:
      /([?&](?:x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|sig)=)[^&\s"']+/gi,
    replace: (_m, key) => `${key}${MASK}`,
  },
];

export function redact(text: string): string {
  let out = text;
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace as (m: string) => string);
  return out;
}

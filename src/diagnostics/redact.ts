/**
 * Credentials that can show up in log lines or mount options, masked before anything enters a bundle.
 * Nothing that holds secrets is ever read (environment, kubeconfig, service-account token); this is the
 * second line of defence for secrets that daemons themselves print.
 *
 * Every rule is linear in its input, because any pod can plant the text (kubelet logs a missing container
 * command verbatim): each starts on a literal key (or a position a lookbehind pins to the start of a run),
 * every run before the point of success is bounded or made of characters that cannot follow it, and no
 * rule crosses a line, so the text can be redacted line-aligned chunk by chunk.
 */
const MASK = '[REDACTED]';

/** The names whose value is a credential, for `key=value`, `key: value` and JSON. */
const KEYS = 'token|password|passwd|pwd|secret|api[_-]?key|access[_-]?key(?:[_-]?id)?|credentials?|signature';
/** An optional JSON quote, also escaped once (JSON logged inside a JSON string). */
const Q = '(?:\\\\?")?';
const SP = '[ \\t]{0,16}';

interface Rule {
  readonly pattern: RegExp;
  readonly replace: string | ((...groups: string[]) => string);
}

const RULES: readonly Rule[] = [
  // "Authorization: Bearer abc", "authorization=Basic abc", also in JSON ("Authorization":"Bearer abc").
  {
    pattern: new RegExp(
      `\\b((?:proxy-)?authorization${Q}${SP}[:=]${SP}${Q})(?:(bearer|basic|negotiate|token)[ \\t]{1,16})?[^\\s"',;\\\\]+`,
      'gi',
    ),
    replace: (_m, key, scheme) => `${key}${scheme ? `${scheme} ` : ''}${MASK}`,
  },
  { pattern: /\b(bearer[ \t]{1,16})[A-Za-z0-9._~+/=-]{8,}/gi, replace: `$1${MASK}` },
  // Cookie and Set-Cookie headers: every cookie of the header.
  {
    pattern: new RegExp(`\\b((?:set-)?cookie${Q}${SP}:${SP}${Q})[^\\r\\n"\\\\]+`, 'gi'),
    replace: `$1${MASK}`,
  },
  // key=value and key: value (cifs password=, --token=, client_secret: ..., AWSAccessKeyId=, Signature=).
  { pattern: new RegExp(`((?:${KEYS})${Q}${SP}[:=]${SP}${Q})[^\\s"',;&\\\\]+`, 'gi'), replace: `$1${MASK}` },
  // Command-line flags with the value after a space: --token abc, --bootstrap-token abc, -password abc.
  {
    pattern: new RegExp(
      `(?<![\\w-])(--?(?:[a-z0-9]{1,32}[-_.]){0,8}(?:${KEYS})[ \\t]{1,16})(?![-\\s])[^\\s"',;&\\\\]+`,
      'gi',
    ),
    replace: `$1${MASK}`,
  },
  // Environment-style names with the value after a space: AWS_SECRET_ACCESS_KEY abc, GITHUB_TOKEN abc.
  {
    pattern:
      /\b((?:[A-Z0-9]{1,32}_){1,8}(?:SECRET|TOKEN|PASSWORD|PASSWD|KEY)(?:_[A-Z0-9]{1,32}){0,4}[ \t]{1,16})[^\s"',;&=:-][^\s"',;&]*/g,
    replace: `$1${MASK}`,
  },
  // Docker's config.json and credential helpers: "auth":"base64(user:password)".
  { pattern: new RegExp(`(${Q}auth${Q}${SP}:${SP}${Q})[^"\\\\\\s]+`, 'gi'), replace: `$1${MASK}` },
  // URL userinfo: https://user:password@host, https://token@host.
  { pattern: /(:\/\/)[^\s/?#@"'<>]{1,512}@/g, replace: `$1${MASK}@` },
  // JSON Web Tokens (service-account tokens among them), wherever they appear.
  { pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*/g, replace: MASK },
  // Presigned URL signatures (S3 SigV4 and SigV2, Azure SAS, GCS V4 and V2).
  {
    pattern:
      /([?&](?:x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|sig|signature|awsaccesskeyid|googleaccessid)=)[^&\s"']+/gi,
    replace: `$1${MASK}`,
  },
];

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----/g;

/**
 * PEM private keys span lines, so they are masked over the whole text first: the body between BEGIN and
 * END, or everything after a BEGIN whose END is missing (a key cut by a size limit is still a secret).
 */
function redactPem(text: string): string {
  if (!text.includes('PRIVATE KEY-----')) return text;
  const begin = new RegExp(PEM_BEGIN);
  const end = new RegExp(PEM_END);
  let out = '';
  let pos = 0;
  for (;;) {
    begin.lastIndex = pos;
    const b = begin.exec(text);
    if (!b) return out + text.slice(pos);
    const bodyStart = b.index + b[0].length;
    end.lastIndex = bodyStart;
    const e = end.exec(text);
    out += `${text.slice(pos, bodyStart)}${MASK}`;
    if (!e) return out;
    out += e[0];
    pos = e.index + e[0].length;
  }
}

function redactLines(text: string): string {
  let out = text;
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace as string);
  return out;
}

/** Masks credentials in a text, in one go. */
export function redact(text: string): string {
  return redactLines(redactPem(text));
}

export interface ChunkedRedaction {
  /** Aborting stops the work between two chunks; the promise then rejects. */
  readonly signal?: AbortSignal;
  /** Lets the event loop run (health probes, metrics) between chunks. */
  readonly yieldNow: () => Promise<void>;
  /** Characters per chunk, cut after a newline; a longer line is one chunk. */
  readonly chunkChars?: number;
}

export const REDACT_CHUNK_CHARS = 64 * 1024;

/** The same result as redact(), computed in line-aligned chunks with the event loop served between them. */
export async function redactInChunks(text: string, opts: ChunkedRedaction): Promise<string> {
  const size = opts.chunkChars ?? REDACT_CHUNK_CHARS;
  const src = redactPem(text);
  const out: string[] = [];
  let pos = 0;
  while (pos < src.length) {
    if (opts.signal?.aborted) throw new Error('time limit reached');
    let end = Math.min(src.length, pos + size);
    if (end < src.length) {
      const nl = src.lastIndexOf('\n', end - 1);
      end = nl >= pos ? nl + 1 : src.indexOf('\n', end) + 1 || src.length;
    }
    out.push(redactLines(src.slice(pos, end)));
    pos = end;
    await opts.yieldNow();
  }
  if (opts.signal?.aborted) throw new Error('time limit reached');
  return out.join('');
}

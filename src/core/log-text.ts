/**
 * One readable line per log record, in klog's shape: `Lmmdd hh:mm:ss.uuuuuu pid component] "msg" k="v"`.
 * NPD users and their log pipelines read klog text (its InfoS form quotes the message and string
 * values); the time is UTC, as in the JSON records, so both formats agree on every timestamp.
 */
const LETTER: Readonly<Record<string, string>> = {
  trace: 'I',
  debug: 'I',
  info: 'I',
  warn: 'W',
  error: 'E',
  fatal: 'F',
};

/** Fields the header already shows, or that pino adds to every record. */
const HEADER_KEYS = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component']);

export function textLine(json: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const letter = LETTER[String(record.level)] ?? 'I';
  const component = typeof record.component === 'string' ? record.component : 'npd';
  const fields = Object.entries(record)
    .filter(([k]) => !HEADER_KEYS.has(k))
    .map(([k, v]) => `${k}=${fieldValue(v)}`);
  const head = `${letter}${klogTime(String(record.time))} ${String(record.pid ?? '').padStart(7)} ${component}]`;
  return `${[head, JSON.stringify(String(record.msg ?? '')), ...fields].join(' ')}\n`;
}

/** `mmdd hh:mm:ss.uuuuuu` from an RFC 3339 UTC time; the clock has millisecond resolution. */
function klogTime(iso: string): string {
  const m = /^\d{4}-(\d\d)-(\d\d)T(\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?/.exec(iso);
  if (!m) return iso;
  return `${m[1]}${m[2]} ${m[3]}.${(m[4] ?? '').padEnd(6, '0')}`;
}

function fieldValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (isError(v)) return JSON.stringify(v.message);
  return JSON.stringify(v);
}

/** pino's error serializer: {type, message, stack}; one line keeps the message only. */
function isError(v: unknown): v is { message: string; stack?: string } {
  return typeof v === 'object' && v !== null && 'message' in v && 'stack' in v;
}

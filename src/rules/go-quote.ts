const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
};

/** Go's strconv.Quote (what NPD's %q produces), so condition-change messages read exactly as NPD's. */
export function goQuote(text: string): string {
  let out = '"';
  for (const ch of text) {
    const simple = SIMPLE_ESCAPES[ch];
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const cp = ch.codePointAt(0) as number;
    if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if ((cp >= 0x80 && cp < 0xa0) || cp === 0x2028 || cp === 0x2029 || cp === 0xfeff) {
      out += `\\u${cp.toString(16).padStart(4, '0')}`;
    } else out += ch;
  }
  return `${out}"`;
}

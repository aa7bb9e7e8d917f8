/**
 * Go's unicode.IsSpace: the Unicode White_Space property (U+0009-U+000D, space, U+0085, U+00A0,
 * U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000). JS trim() also strips U+FEFF,
 * which Go keeps. Every one of them is a single UTF-16 unit.
 */
export function isGoSpace(unit: number): boolean {
  if (unit <= 0x20) return unit === 0x20 || (unit >= 0x09 && unit <= 0x0d);
  if (unit < 0x85) return false;
  if (unit <= 0xa0) return unit === 0x85 || unit === 0xa0;
  if (unit < 0x1680) return false;
  return (
    unit === 0x1680 ||
    (unit >= 0x2000 && unit <= 0x200a) ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000
  );
}

/**
 * Go's strings.TrimSpace, which NPD applies to kmsg messages and plugin output. One pass from each end:
 * a regex with an anchored-at-end space run backtracks, quadratic on long text full of spaces.
 */
export function goTrimSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isGoSpace(text.charCodeAt(start))) start++;
  while (end > start && isGoSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

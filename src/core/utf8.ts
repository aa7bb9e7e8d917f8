/**
 * The longest prefix of `bytes` that is at most `max` bytes and does not end inside a UTF-8 sequence.
 * NPD slices Go strings at a byte count and may split a character; a split character would reach the
 * API server as U+FFFD, so ours never does.
 */
export function cutUtf8(bytes: Buffer, max: number): Buffer {
  if (bytes.length <= max) return bytes;
  let end = max;
  // Back up over continuation bytes (10xxxxxx) to the start of the character that crosses the cut.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

/** Cuts `text` to at most `maxBytes` of UTF-8 without splitting a character. */
export function truncateUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  // Every UTF-16 unit encodes to at most 3 bytes, so short strings need no encoding at all.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  return { text: cutUtf8(bytes, maxBytes).toString('utf8'), truncated: true };
}

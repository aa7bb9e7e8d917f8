/**
 * The UTF-8 bytes of the line being matched, encoded once however many regexes read it. RE2 reads
 * bytes: handing it a string makes the addon encode the line again for every regex (tens of µs on a
 * 64 KiB line, test/bench, npm run bench -- rules). An engine makes one per line, lazily encoded;
 * keyed by the text all the same, so a holder can never hand one line's bytes to another.
 */
export class LineBytes {
  private text: string | undefined;
  private bytes: Buffer = Buffer.alloc(0);

  of(text: string): Buffer {
    if (text !== this.text) {
      this.bytes = Buffer.from(text);
      this.text = text;
    }
    return this.bytes;
  }
}

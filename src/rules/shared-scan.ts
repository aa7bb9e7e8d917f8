import { MultiLiteral } from './multi-literal.ts';

/**
 * One literal search over a line on behalf of every rule set that reads the same source. Monitors
 * that share a reader (with the shipped rules: kernel, readonly, hardware and GPU on /dev/kmsg) would
 * otherwise each scan every line for their own literals.
 */
export class SharedScan {
  readonly texts: readonly string[];
  private readonly search: MultiLiteral;
  private readonly scratch: Uint8Array;

  constructor(texts: readonly string[]) {
    this.texts = texts;
    this.search = new MultiLiteral(texts);
    this.scratch = new Uint8Array(texts.length);
  }

  /** Marks of the texts that occur in the line (indexes into `texts`), or undefined when none do. */
  find(line: string): Uint8Array | undefined {
    if (this.search.findAll(line, this.scratch) === 0) return undefined;
    const found = this.scratch.slice();
    this.scratch.fill(0);
    return found;
  }
}

/** The scan for the union of several rule sets' literals, or undefined when none has any. */
export function sharedScan(literalSets: readonly (readonly string[])[]): SharedScan | undefined {
  const texts = [...new Set(literalSets.flat())];
  return texts.length > 0 ? new SharedScan(texts) : undefined;
}

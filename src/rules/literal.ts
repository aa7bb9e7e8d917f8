/**
 * Extracts literals of which every match of an RE2 pattern must contain at least one. The rule engine
 * looks for them with a substring search before running the regex, which keeps the common case (a log
 * line that no rule is about) far below a regex evaluation. Alternations and small classes expand into
 * several literals (`Link (?:is )?[Dd]own` requires one of four), so patterns with a top-level `|` are
 * gated too. The extraction is conservative: whatever it does not understand contributes nothing, and
 * when nothing is left it returns undefined and the regex runs on every line.
 */
export interface RequiredLiteral {
  /** Any one of these occurs in every match; at least 3 characters each. */
  readonly texts: readonly string[];
  readonly ignoreCase: boolean;
}

/** Every string a node can match, when that set is small; a quantifier-free literal has one. */
type Exact = readonly string[];

interface Info {
  readonly exact: Exact | undefined;
  /** A set of which every match of the node contains one member, or undefined. */
  readonly best: Exact | undefined;
}

const MAX_SET = 16;
const MIN_LENGTH = 3;
const ESCAPED_LITERALS = new Set([...'\\.+*?()|[]{}^$-/ #&~<>=!:,\'"@%`;_']);
const ZERO_WIDTH_ESCAPES = new Set([...'bBAz']);
const ANY: Info = { exact: undefined, best: undefined };
const EMPTY: Info = { exact: [''], best: undefined };

export function requiredLiteral(pattern: string): RequiredLiteral | undefined {
  let src = pattern;
  let ignoreCase = false;
  if (src.startsWith('(?i)')) {
    ignoreCase = true;
    src = src.slice(4);
  }
  if (/\\Q|\(\?[a-zA-Z-]*[)]/.test(src)) return undefined;
  const texts = parse(src);
  if (!texts || texts.some((t) => t.length < MIN_LENGTH)) return undefined;
  if (ignoreCase && !texts.every((t) => /^[\x20-\x7e]+$/.test(t))) return undefined;
  return { texts: ignoreCase ? texts.map((t) => t.toLowerCase()) : texts, ignoreCase };
}

/** The best literal set of a source, or undefined for anything the parser does not follow. */
function parse(src: string): Exact | undefined {
  try {
    const parser = new Parser(src);
    const info = parser.alternation();
    return parser.done() ? minimal(bestOf(info)) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Lower-cases a line so that an ASCII literal found in it means RE2's (?i) could match there too.
 * U+017F (long s) is the one non-ASCII letter whose lower case is not in RE2's fold orbit of its
 * ASCII partner; U+212A (Kelvin) lower-cases to k already.
 */
export function foldForLiteral(line: string): string {
  const lower = line.toLowerCase();
  return lower.includes('\u017f') ? lower.replaceAll('\u017f', 's') : lower;
}

/** A member that contains another member adds nothing: the shorter one occurs wherever it does. */
function minimal(set: Exact | undefined): Exact | undefined {
  return set?.filter((t, i) => !set.some((u, j) => j !== i && t.includes(u) && (t !== u || j < i)));
}

/** A set is as good as its shortest member: that bounds how far a multi-literal search can skip. */
function quality(set: Exact): number {
  return set.length === 0 ? 0 : Math.min(...set.map((s) => s.length)) - set.length / (MAX_SET + 1);
}

function better(a: Exact | undefined, b: Exact | undefined): Exact | undefined {
  if (!a || a.includes('')) return b;
  if (!b || b.includes('')) return a;
  return quality(b) > quality(a) ? b : a;
}

function bestOf(info: Info): Exact | undefined {
  return better(info.best, info.exact);
}

function cross(a: Exact, b: Exact): Exact | undefined {
  if (a.length * b.length > MAX_SET) return undefined;
  return [...new Set(a.flatMap((x) => b.map((y) => x + y)))];
}

function union(sets: readonly (Exact | undefined)[]): Exact | undefined {
  if (sets.some((s) => s === undefined)) return undefined;
  const all = [...new Set(sets.flat() as string[])];
  return all.length > MAX_SET ? undefined : all;
}

/** Exactly `times` copies of an atom. */
function repeated(atom: Info, times: number): Info {
  const copies = Array.from({ length: times }, () => atom.exact as Exact);
  const exact = copies.reduce<Exact | undefined>((p, e) => p && cross(p, e), ['']);
  return exact ? { exact, best: undefined } : { exact: undefined, best: bestOf(atom) };
}

/** Folds a sequence: adjacent exact parts multiply out; anything else ends the running product. */
class Sequence {
  private product: Exact | undefined = [''];
  private best: Exact | undefined;
  private allExact = true;

  add(info: Info): void {
    const joined = info.exact && this.product ? cross(this.product, info.exact) : undefined;
    if (joined) {
      this.product = joined;
      return;
    }
    this.flush();
    this.allExact = false;
    this.best = better(this.best, info.best);
    this.product = info.exact;
  }

  /** `x+` is `x` followed by `x*`: its first copy extends the product, then the product ends. */
  addRepeated(info: Info): void {
    this.add(info);
    this.flush();
    this.allExact = false;
    this.product = [''];
  }

  result(): Info {
    if (this.allExact && this.product) return { exact: this.product, best: undefined };
    this.flush();
    return { exact: undefined, best: this.best };
  }

  private flush(): void {
    this.best = better(this.best, this.product);
  }
}

/** A recursive-descent reader of the RE2 syntax subset that matters for literals. */
class Parser {
  private readonly src: string;
  private at = 0;

  constructor(src: string) {
    this.src = src;
  }

  done(): boolean {
    return this.at >= this.src.length;
  }

  alternation(): Info {
    const branches = [this.sequence()];
    while (this.src[this.at] === '|') {
      this.at++;
      branches.push(this.sequence());
    }
    if (branches.length === 1) return branches[0] as Info;
    return { exact: union(branches.map((b) => b.exact)), best: union(branches.map(bestOf)) };
  }

  private sequence(): Info {
    const seq = new Sequence();
    while (!this.done() && this.src[this.at] !== '|' && this.src[this.at] !== ')') {
      const atom = this.atom();
      this.quantified(seq, atom);
    }
    return seq.result();
  }

  private quantified(seq: Sequence, atom: Info): void {
    const q = this.src[this.at];
    const repeat = q === '{' ? /^\{(\d+)(,\d*)?\}/.exec(this.src.slice(this.at, this.at + 24)) : null;
    if (q !== '?' && q !== '*' && q !== '+' && !repeat) {
      seq.add(atom);
      return;
    }
    this.at += repeat ? repeat[0].length : 1;
    if (this.src[this.at] === '?') this.at++;
    const min = repeat ? Number(repeat[1]) : q === '+' ? 1 : 0;
    if (q === '?') seq.add(atom.exact ? { exact: union([atom.exact, ['']]), best: undefined } : ANY);
    else if (min === 0) seq.add(ANY);
    else if (repeat && !repeat[2] && atom.exact) seq.add(repeated(atom, min));
    else seq.addRepeated(atom);
  }

  private atom(): Info {
    const c = String.fromCodePoint(this.src.codePointAt(this.at) as number);
    this.at += c.length;
    if (c === '(') return this.group();
    if (c === '[') return this.charClass();
    if (c === '\\') return this.escape();
    if (c === '^' || c === '$') return EMPTY;
    if (c === '.') return ANY;
    return { exact: [c], best: undefined };
  }

  private group(): Info {
    const flags = /^(?:\?(?:P?<\w+>|:)?)?/.exec(this.src.slice(this.at)) as RegExpExecArray;
    if (this.src[this.at] === '?' && flags[0].length === 1) return this.skipGroup();
    this.at += flags[0].length;
    const inner = this.alternation();
    if (this.src[this.at] !== ')') throw new SyntaxError('unclosed group');
    this.at++;
    return inner;
  }

  /** Groups with flags such as (?i:…) change what their literals mean: treat them as anything. */
  private skipGroup(): Info {
    let depth = 1;
    while (depth > 0 && !this.done()) {
      const c = this.src[this.at++];
      if (c === '\\') this.at++;
      else if (c === '[') this.charClass();
      else if (c === '(') depth++;
      else if (c === ')') depth--;
    }
    return ANY;
  }

  /** Only classes of plain characters, such as [Dd], expand; the rest match "something". */
  private charClass(): Info {
    const start = this.at;
    if (this.src[this.at] === '^') this.at++;
    if (this.src[this.at] === ']') this.at++;
    while (!this.done() && this.src[this.at] !== ']') {
      if (this.src[this.at] === '\\') this.at++;
      else if (this.src.startsWith('[:', this.at)) this.at = this.posixClassEnd();
      this.at++;
    }
    const body = this.src.slice(start, this.at++);
    const chars = [...new Set(body)];
    if (/[\\^\-[]/.test(body) || chars.length === 0 || chars.length > 4) return ANY;
    return { exact: chars, best: undefined };
  }

  /**
   * RE2 reads `[:` as a POSIX class only if a `:]` follows it (anywhere after: an unknown name is then
   * a syntax error); otherwise the `[` is a plain member. Returns the index of the class's last `]`.
   */
  private posixClassEnd(): number {
    const close = this.src.indexOf(':]', this.at + 2);
    return close < 0 ? this.at : close + 1;
  }

  /** The index just after the next `end`, or the end of the source (RE2 rejected it already then). */
  private past(end: string): number {
    const i = this.src.indexOf(end, this.at);
    return i < 0 ? this.src.length : i + end.length;
  }

  private escape(): Info {
    const next = this.src[this.at] as string;
    this.at++;
    if (ESCAPED_LITERALS.has(next)) return { exact: [next], best: undefined };
    if (ZERO_WIDTH_ESCAPES.has(next)) return EMPTY;
    if ((next === 'x' || next === 'p' || next === 'P') && this.src[this.at] === '{') {
      this.at = this.past('}');
    } else if (next === 'x') this.at += 2;
    else if (next === 'p' || next === 'P') this.at += 1;
    else if (/[0-7]/.test(next)) while (/[0-7]/.test(this.src[this.at] ?? '')) this.at++;
    return ANY;
  }
}

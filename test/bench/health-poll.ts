/**
 * Polls a /healthz from outside the container once a second, as a kubelet liveness probe would (with
 * its 5 s timeout), and counts the answers per phase: a refused connection, a timeout and any status
 * but 200 all count as failures.
 */
export interface HealthTally {
  checks: number;
  notOk: number;
  /** The first few failures, e.g. "12:01:02 503 kernel-monitor: ...". */
  readonly failures: string[];
  slowestMs: number;
}

const KEEP_FAILURES = 5;

export class HealthPoller {
  private tally = HealthPoller.empty();
  private readonly total = HealthPoller.empty();
  private stopped = false;
  private readonly loop: Promise<void>;

  private readonly url: string;
  private readonly everyMs: number;
  private readonly timeoutMs: number;

  constructor(url: string, everyMs = 1000, timeoutMs = 5000) {
    this.url = url;
    this.everyMs = everyMs;
    this.timeoutMs = timeoutMs;
    this.loop = this.run();
  }

  static empty(): HealthTally {
    return { checks: 0, notOk: 0, failures: [], slowestMs: 0 };
  }

  /** The tally since the last call (one phase), and a fresh one started. */
  takePhase(): HealthTally {
    const t = this.tally;
    this.tally = HealthPoller.empty();
    return t;
  }

  overall(): HealthTally {
    return this.total;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const started = Date.now();
      const failure = await this.check();
      for (const t of [this.tally, this.total]) {
        t.checks++;
        t.slowestMs = Math.max(t.slowestMs, Date.now() - started);
        if (failure === undefined) continue;
        t.notOk++;
        if (t.failures.length < KEEP_FAILURES)
          t.failures.push(`${new Date(started).toISOString().slice(11, 19)} ${failure}`);
      }
      await new Promise((r) => setTimeout(r, Math.max(0, this.everyMs - (Date.now() - started))));
    }
  }

  /** undefined when 200, else what came back. */
  private async check(): Promise<string | undefined> {
    try {
      const r = await fetch(this.url, { signal: AbortSignal.timeout(this.timeoutMs) });
      const body = await r.text();
      return r.status === 200 ? undefined : `${r.status} ${body.slice(0, 200)}`;
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') return `timeout ${this.timeoutMs} ms`;
      return (err as { cause?: { code?: string } }).cause?.code ?? String(err);
    }
  }
}

export function formatHealth(t: HealthTally): string {
  const failures = t.failures.length > 0 ? `; first failures: ${t.failures.join(' | ')}` : '';
  return `/healthz ${t.checks} checks, ${t.notOk} not 200, slowest ${t.slowestMs} ms${failures}`;
}

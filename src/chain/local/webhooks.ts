// Raw-transaction webhook delivery, as a webhook provider does it: every landed transaction that
// names the parlay program (failed ones included) is POSTed as `[rawTx]` to each target with its
// `Authorization` header. At least once: 5xx, timeouts and connection errors are retried with
// exponential backoff; a 4xx answer is final. Deliveries to one target go one at a time; options
// shuffle the order of pending deliveries and duplicate every delivery. A target may also take its
// deliveries in process (`deliver`), with the same answers and retries, instead of over HTTP.
import type { TxRecord } from './ledger.ts';
import { webhookTransaction } from './raw-tx.ts';

export interface WebhookTarget {
  /** where deliveries go (for an in-process target: only its name) */
  url: string;
  authorization?: string;
  /** In process instead of an HTTP POST: takes the body, answers the HTTP status it stands for (throws: a connection error). */
  deliver?(body: string): Promise<number>;
}

export interface WebhookOptions {
  shuffle?: boolean;
  duplicate?: boolean;
  /** first retry delay (default 200 ms), doubled per attempt up to retryMaxMs (default 5 s) */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** attempts before giving up (default 20) */
  maxAttempts?: number;
  /** per-request timeout (default 5 s) */
  timeoutMs?: number;
  /** hold each delivery this long before it may be sent (default 0) */
  delayMs?: number;
}

export interface WebhookStats {
  enqueued: number;
  delivered: number;
  retries: number;
  /** deliveries given up after maxAttempts */
  failures: number;
  /** deliveries answered with a 4xx (not retried) */
  rejected: number;
  duplicates: number;
}

export interface WebhookAttempt {
  url: string;
  signature: string;
  attempt: number;
  status?: number;
  error?: string;
}

interface Item {
  id: number;
  target: WebhookTarget;
  body: string;
  signature: string;
  attempts: number;
  readyAt: number;
}

export class WebhookDelivery {
  shuffle: boolean;
  duplicate: boolean;
  readonly stats: WebhookStats = { enqueued: 0, delivered: 0, retries: 0, failures: 0, rejected: 0, duplicates: 0 };
  /** the latest attempts, oldest first (at most 1000) */
  readonly attempts: WebhookAttempt[] = [];
  private queue: Item[] = [];
  private readonly busy = new Set<string>();
  private paused = false;
  private closed = false;
  private nextId = 1;
  private timer?: NodeJS.Timeout;
  private waiters: (() => void)[] = [];
  private readonly opts: Required<Omit<WebhookOptions, 'shuffle' | 'duplicate'>>;

  constructor(
    readonly targets: WebhookTarget[],
    opts: WebhookOptions = {},
  ) {
    this.shuffle = !!opts.shuffle;
    this.duplicate = !!opts.duplicate;
    this.opts = {
      retryBaseMs: opts.retryBaseMs ?? 200,
      retryMaxMs: opts.retryMaxMs ?? 5000,
      maxAttempts: opts.maxAttempts ?? 20,
      timeoutMs: opts.timeoutMs ?? 5000,
      delayMs: opts.delayMs ?? 0,
    };
  }

  /** Number of deliveries waiting or in flight. */
  get pending(): number {
    return this.queue.length + this.busy.size;
  }

  enqueue(rec: TxRecord): void {
    if (this.closed || this.targets.length === 0) return;
    const body = JSON.stringify([webhookTransaction(rec)]);
    for (const target of this.targets) {
      const copies = this.duplicate ? 2 : 1;
      for (let i = 0; i < copies; i++) {
        this.queue.push({
          id: this.nextId++,
          target,
          body,
          signature: rec.signature,
          attempts: 0,
          readyAt: Date.now() + this.opts.delayMs,
        });
        this.stats.enqueued += 1;
        if (i > 0) this.stats.duplicates += 1;
      }
    }
    this.pump();
  }

  /** Holds deliveries (they queue up) until resume(). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    this.pump();
  }

  /** Resolves when nothing is pending (queued, waiting for a retry, or in flight). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.queue = [];
    this.settle();
  }

  private settle(): void {
    if (this.pending === 0 || this.closed) for (const w of this.waiters.splice(0)) w();
  }

  private pump(): void {
    if (this.paused || this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const now = Date.now();
    let nextAt = Infinity;
    for (const target of this.targets) {
      if (this.busy.has(target.url)) continue;
      const mine = this.queue.filter((it) => it.target === target);
      const ready = mine.filter((it) => it.readyAt <= now);
      for (const it of mine) if (it.readyAt > now) nextAt = Math.min(nextAt, it.readyAt);
      if (ready.length === 0) continue;
      const pick = this.shuffle ? ready[Math.floor(Math.random() * ready.length)] : ready.reduce((a, b) => (a.id < b.id ? a : b));
      this.queue = this.queue.filter((it) => it !== pick);
      this.busy.add(target.url);
      void this.deliver(pick).finally(() => {
        this.busy.delete(target.url);
        this.pump();
        this.settle();
      });
    }
    if (nextAt !== Infinity) {
      this.timer = setTimeout(() => this.pump(), Math.max(0, nextAt - now));
      this.timer.unref();
    }
  }

  private record(a: WebhookAttempt): void {
    this.attempts.push(a);
    if (this.attempts.length > 1000) this.attempts.shift();
  }

  private async deliver(it: Item): Promise<void> {
    it.attempts += 1;
    let status: number | undefined;
    let error: string | undefined;
    try {
      if (it.target.deliver) {
        status = await it.target.deliver(it.body);
      } else {
        const res = await fetch(it.target.url, {
          method: 'POST',
          headers: {
            'Content-Type': 'application/json',
            ...(it.target.authorization !== undefined ? { Authorization: it.target.authorization } : {}),
          },
          body: it.body,
          signal: AbortSignal.timeout(this.opts.timeoutMs),
        });
        status = res.status;
        await res.arrayBuffer().catch(() => undefined);
      }
    } catch (e) {
      error = (e as Error).name === 'TimeoutError' ? 'timeout' : (e as Error).message;
    }
    this.record({ url: it.target.url, signature: it.signature, attempt: it.attempts, status, error });
    if (this.closed) return;
    if (status !== undefined && status < 300) {
      this.stats.delivered += 1;
      return;
    }
    if (status !== undefined && status < 500) {
      this.stats.rejected += 1;
      return;
    }
    if (it.attempts >= this.opts.maxAttempts) {
      this.stats.failures += 1;
      return;
    }
    this.stats.retries += 1;
    const backoff = Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** (it.attempts - 1));
    it.readyAt = Date.now() + backoff;
    this.queue.push(it);
  }
}

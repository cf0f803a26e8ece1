// A background drain that runs when poked (coalesced: at most one run every `gapMs`), at once again
// while a run reports more work, and otherwise every `idleMs` (for what other nodes left behind).
export interface WakeLoopOptions {
  idleMs: number;
  gapMs: number;
  onError(err: unknown): void;
}

export class WakeLoop {
  private timer: NodeJS.Timeout | null = null;
  private due = Infinity;
  private running = false;
  private poked = false;
  private stopped = false;
  private lastStart = 0;
  /** The run in progress, if any (stop() waits for it). */
  private current: Promise<void> | null = null;

  /** `work` resolves to true when it left more to do. */
  constructor(
    private work: () => Promise<boolean>,
    private o: WakeLoopOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  /** Something to drain was just committed: run soon. */
  poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.poked = true;
      return;
    }
    this.schedule(this.lastStart + this.o.gapMs - Date.now());
  }

  /** No further runs; resolves once the run in progress (if any) ended, or after `waitMs` at most:
   *  a caller closing the database or the bus next must not pull them from under a drain. */
  stop(waitMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!this.current) return Promise.resolve();
    let t: NodeJS.Timeout | undefined;
    return Promise.race([
      this.current,
      new Promise<void>((r) => {
        t = setTimeout(r, waitMs);
      }),
    ]).finally(() => clearTimeout(t));
  }

  private schedule(ms: number): void {
    const at = Date.now() + Math.max(0, ms);
    if (this.timer && this.due <= at) return; // already due sooner
    if (this.timer) clearTimeout(this.timer);
    this.due = at;
    this.timer = setTimeout(() => void this.run(), Math.max(0, ms));
  }

  private async run(): Promise<void> {
    this.timer = null;
    this.due = Infinity;
    if (this.stopped || this.running) return;
    this.running = true;
    this.poked = false;
    this.lastStart = Date.now();
    let more = false;
    let done!: () => void;
    this.current = new Promise<void>((r) => {
      done = r;
    });
    try {
      more = await this.work();
    } catch (err) {
      this.o.onError(err);
    }
    this.running = false;
    this.current = null;
    done();
    if (this.stopped) return;
    this.schedule(more ? 0 : this.poked ? this.lastStart + this.o.gapMs - Date.now() : this.o.idleMs);
  }
}

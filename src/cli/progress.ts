// A progress bar on stderr. On a TTY it redraws one line (at most 10 times a second); elsewhere
// (CI logs, pipes) it prints a plain line at every 10 % step or every 5 s, so logs stay readable.
export interface ProgressOptions {
  stream?: NodeJS.WriteStream | { write(s: string): boolean; isTTY?: boolean; columns?: number };
  quiet?: boolean;
}

export class Progress {
  private done = 0;
  private started = Date.now();
  private lastDraw = 0;
  private lastStep = -1;
  private readonly tty: boolean;
  private readonly stream: NonNullable<ProgressOptions['stream']>;
  private note = '';

  constructor(
    private label: string,
    private total: number,
    private o: ProgressOptions = {},
  ) {
    this.stream = o.stream ?? process.stderr;
    this.tty = !!this.stream.isTTY;
  }

  /** Work already done before this run (a resumed job): counted, not in the rate. */
  resumeAt(done: number): this {
    this.done = done;
    this.started = Date.now();
    this.base = done;
    return this;
  }

  private base = 0;

  setTotal(total: number): void {
    this.total = total;
    this.draw();
  }

  setLabel(label: string): void {
    this.label = label;
    this.draw(true);
  }

  set(done: number, note = this.note): void {
    this.done = done;
    this.note = note;
    this.draw();
  }

  add(n = 1, note = this.note): void {
    this.set(this.done + n, note);
  }

  private line(): string {
    const total = Math.max(this.total, this.done);
    const frac = total > 0 ? this.done / total : 1;
    const secs = (Date.now() - this.started) / 1000;
    const rate = secs > 0 ? (this.done - this.base) / secs : 0;
    const eta = rate > 0 ? Math.round((total - this.done) / rate) : null;
    const width = 24;
    const filled = Math.round(frac * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    return `${this.label} [${bar}] ${(frac * 100).toFixed(1)}% ${this.done}/${total} ${rate.toFixed(1)}/s${eta !== null ? ` eta ${eta}s` : ''}${this.note ? ` ${this.note}` : ''}`;
  }

  draw(force = false): void {
    if (this.o.quiet) return;
    const now = Date.now();
    if (this.tty) {
      if (!force && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      const cols = (this.stream as any).columns ?? 120;
      this.stream.write(`\r\x1b[2K${this.line().slice(0, cols - 1)}`);
      return;
    }
    const step = this.total > 0 ? Math.floor((this.done / this.total) * 10) : 0;
    if (!force && step === this.lastStep && now - this.lastDraw < 5000) return;
    this.lastStep = step;
    this.lastDraw = now;
    this.stream.write(`${this.line()}\n`);
  }

  /** Final line (kept on screen). */
  finish(note?: string): void {
    if (note !== undefined) this.note = note;
    if (this.o.quiet) return;
    if (this.tty) this.stream.write(`\r\x1b[2K${this.line()}\n`);
    else this.stream.write(`${this.line()}\n`);
  }
}

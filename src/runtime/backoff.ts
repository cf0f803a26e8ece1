// Exponential backoff between attempts of something that keeps failing: firstMs, doubled per
// failure up to maxMs; a success starts over.
export class Backoff {
  private failures = 0;

  constructor(
    readonly firstMs = 100,
    readonly maxMs = 5_000,
  ) {}

  /** Failures in a row so far. */
  get attempts(): number {
    return this.failures;
  }

  /** One more failure: how long to wait before the next attempt. */
  fail(): number {
    const ms = Math.min(this.maxMs, this.firstMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return ms;
  }

  succeed(): void {
    this.failures = 0;
  }
}

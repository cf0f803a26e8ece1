// What a node started, stopped in reverse: each part says how it stops as it starts, and the node
// closes them last-started first (the HTTP server before the services behind it, the bus and the
// database last). One failure to stop is logged and does not keep the others running; neither does
// a part that does not stop in time (`stopTimeoutMs`): it is named in the log and in a process
// warning, and the parts after it stop anyway, so a close always ends.
export type Stop = () => Promise<unknown> | unknown;

/** How long one part may take to stop before the close goes on without it (default). */
export const STOP_TIMEOUT_MS = 15_000;

export class Lifecycle {
  private stops: { name: string; stop: Stop }[] = [];
  private closing: Promise<void> | null = null;

  constructor(
    private log: { error(o: object, m?: string): void },
    private stopTimeoutMs = STOP_TIMEOUT_MS,
  ) {}

  /** Registers how a part that just started stops. */
  defer(name: string, stop: Stop): void {
    this.stops.push({ name, stop });
  }

  /** Stops every part, last started first; once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const { name, stop } of this.stops.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), this.stopTimeoutMs);
        });
        try {
          if ((await Promise.race([Promise.resolve().then(stop), late])) === 'late') {
            this.log.error({ part: name, ms: this.stopTimeoutMs }, 'a part did not stop in time; the others stop without it');
            process.emitWarning(`${name} did not stop within ${this.stopTimeoutMs} ms; the node closed without it`, 'LifecycleWarning');
          }
        } catch (err) {
          this.log.error({ err, part: name }, 'stopping a part failed');
        } finally {
          clearTimeout(timer);
        }
      }
    })();
    return this.closing;
  }
}

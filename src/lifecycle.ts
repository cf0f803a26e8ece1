// What a node started, stopped in reverse: each part says how it stops as it starts, and the node
// closes them last-started first (the HTTP server before the services behind it, the bus and the
// database last). One failure to stop is logged and does not keep the others running.
export type Stop = () => Promise<unknown> | unknown;

export class Lifecycle {
  private stops: { name: string; stop: Stop }[] = [];
  private closing: Promise<void> | null = null;

  constructor(private log: { error(o: object, m?: string): void }) {}

  /** Registers how a part that just started stops. */
  defer(name: string, stop: Stop): void {
    this.stops.push({ name, stop });
  }

  /** Stops every part, last started first; once. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const { name, stop } of this.stops.reverse()) {
        try {
          await stop();
        } catch (err) {
          this.log.error({ err, part: name }, 'stopping a part failed');
        }
      }
    })();
    return this.closing;
  }
}

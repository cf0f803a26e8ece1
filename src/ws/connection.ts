// One WebSocket connection's bounds (docs/ws.md, "Bounds and close codes"): a send buffer that
// never grows past its bound (a consumer that stops reading is dropped, 4008), a message rate
// (4029), liveness (a socket silent past the idle timeout is terminated, never left half-open).
import type WebSocket from 'ws';
import type { FeedListener } from '../clob/market-feed.ts';
import type { Config } from '../config.ts';

/** The per-connection bounds and heartbeats of the channels (settings `WS_*`, src/config.ts). */
export type WsLimits = Pick<
  Config['ws'],
  'maxPayloadBytes' | 'maxBufferedBytes' | 'maxAssets' | 'maxConnectionsPerIp' | 'messagesPerSecond' | 'pingMs' | 'idleTimeoutMs'
>;

export const CLOSE = {
  malformed: 4400,
  unauthorized: 4401,
  slowConsumer: 4008,
  tooManySubscriptions: 4413,
  flood: 4029,
  unsupported: 1003,
  goingAway: 1001,
} as const;

export class Connection implements FeedListener {
  lastSeen = Date.now();
  closed = false;
  private tokens: number;
  private refilledAt = Date.now();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    readonly ws: WebSocket,
    readonly ip: string,
    readonly kind: 'market' | 'user',
    private sent: Record<'market' | 'user', number>,
    private limits: WsLimits,
    private onDrop: (c: Connection, code: number, reason: string) => void,
    private log: { error(o: object, m?: string): void },
  ) {
    this.tokens = limits.messagesPerSecond;
  }

  /** Sends a text frame unless that would take the queue past its bound: then the connection is dropped. */
  deliver(text: string, bytes = Buffer.byteLength(text)): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount + bytes > this.limits.maxBufferedBytes) {
      this.drop(CLOSE.slowConsumer, `slow consumer: more than ${this.limits.maxBufferedBytes} bytes unread`);
      return;
    }
    this.ws.send(text);
    this.sent[this.kind]++;
  }

  error(message: string): void {
    this.deliver(JSON.stringify({ event_type: 'error', message }));
  }

  /** Takes a token of the message bucket; false (and the connection dropped) past the rate. */
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.limits.messagesPerSecond, this.tokens + ((now - this.refilledAt) / 1000) * this.limits.messagesPerSecond);
    this.refilledAt = now;
    if (this.tokens < 1) {
      this.drop(CLOSE.flood, `more than ${this.limits.messagesPerSecond} messages per second`);
      return false;
    }
    this.tokens -= 1;
    return true;
  }

  /** Runs the connection's requests one after the other (a subscribe resolves tokens asynchronously). */
  serial(fn: () => Promise<void>): void {
    this.chain = this.chain
      .then(() => (this.closed ? undefined : fn()))
      .catch((err) => {
        this.log.error({ err }, 'websocket request failed');
        this.drop(1011, 'internal error');
      });
  }

  /** Closes with a code and reason; terminated shortly after if the close handshake does not end (a peer that does not read). */
  drop(code: number, reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.onDrop(this, code, reason);
    try {
      this.ws.close(code, reason.slice(0, 120));
    } catch {
      /* already closing */
    }
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }
}

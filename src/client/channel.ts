// One WebSocket channel connection of the typed client (docs/ws.md), kept open: a `PING` every
// `pingMs` (10 s), a connection silent past `silenceMs` (no frame, no PONG, no server ping) is
// terminated and replaced, never left half-open; a dropped connection is reopened with backoff
// (100 ms doubling to 5 s), first on the same node (a resume there is exact), then across the
// client's node URLs. A close code that says the request itself is wrong (4400, 4413, 1003, 1009)
// ends it with an error instead of a loop.
import WebSocket from 'ws';

export interface ChannelOptions {
  /** Client heartbeat period (default 10 s). */
  pingMs?: number;
  /** A connection with no frame for this long is replaced (default 30 s). */
  silenceMs?: number;
  /** Longest pause between reconnection attempts (default 5 s). */
  maxBackoffMs?: number;
  /** Ends the subscription. */
  signal?: AbortSignal;
  /** Problems: an `error` message of the channel, a refused connection, a fatal close. */
  onError?: (e: Error) => void;
  /** Each connection opened (the URL; `reconnect` false for the first). */
  onOpen?: (url: string, reconnect: boolean) => void;
  /** A connection ended (its close code and reason) and will be reopened. */
  onReconnect?: (code: number, reason: string) => void;
}

/** Close codes after which reconnecting would only repeat the mistake. */
const FATAL = new Set([4400, 4413, 1003, 1009]);

export interface ChannelStats {
  connects: number;
  reconnects: number;
  pingsSent: number;
  silences: number;
  messages: number;
}

export abstract class Channel {
  readonly stats: ChannelStats = { connects: 0, reconnects: 0, pingsSent: 0, silences: 0, messages: 0 };
  /** Resolves when the channel ends (closed, aborted or fatal). */
  readonly done: Promise<void>;
  protected ws: WebSocket | null = null;
  private at: number;
  private ended = false;
  private finish!: () => void;
  private pinger: NodeJS.Timeout | null = null;
  private silence: NodeJS.Timeout | null = null;
  private retry: NodeJS.Timeout | null = null;
  private delay = 100;
  private failuresHere = 0;
  private onAbort = () => this.close();

  constructor(
    private urls: string[],
    start: number,
    private path: string,
    protected o: ChannelOptions,
  ) {
    this.at = start;
    this.done = new Promise((r) => {
      this.finish = r;
    });
    if (o.signal?.aborted) {
      this.ended = true;
      this.finish();
      return;
    }
    o.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The node URL the channel is (or will be) connected to. */
  get url(): string {
    return this.urls[this.at % this.urls.length];
  }

  get closed(): boolean {
    return this.ended;
  }

  /** Headers of the upgrade (the user channel's bearer). */
  protected async headers(): Promise<Record<string, string>> {
    return {};
  }
  /** The connection is open: send the subscription. */
  protected abstract opened(ws: WebSocket, reconnect: boolean): void;
  /** One message (parsed JSON). */
  protected abstract received(m: any): void;
  /** A close code of this channel that needs something before reconnecting (the user channel's 4401). */
  protected async beforeReconnect(_code: number): Promise<void> {}

  protected start(): void {
    void this.connect();
  }

  private async connect(): Promise<void> {
    if (this.ended) return;
    let headers: Record<string, string>;
    try {
      headers = await this.headers();
    } catch (e) {
      this.o.onError?.(e as Error);
      this.again(0, 'no headers', true);
      return;
    }
    if (this.ended) return;
    const url = this.url.replace(/^http/, 'ws') + this.path;
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: 10_000 });
    this.ws = ws;
    let open = false;
    ws.on('open', () => {
      open = true;
      const reconnect = this.stats.connects > 0;
      this.stats.connects++;
      if (reconnect) this.stats.reconnects++;
      this.failuresHere = 0;
      this.delay = 100;
      this.alive();
      this.pinger = setInterval(() => {
        if (ws.readyState === WebSocket.OPEN) {
          ws.send('PING');
          this.stats.pingsSent++;
        }
      }, this.o.pingMs ?? 10_000);
      this.o.onOpen?.(this.url, reconnect);
      this.opened(ws, reconnect);
    });
    ws.on('message', (d) => {
      if (this.ws !== ws) return;
      this.alive();
      const text = String(d);
      if (text === 'PONG') return;
      let m: any;
      try {
        m = JSON.parse(text);
      } catch {
        this.o.onError?.(new Error(`not JSON: ${text.slice(0, 80)}`));
        return;
      }
      this.stats.messages++;
      try {
        this.received(m);
      } catch (e) {
        this.o.onError?.(e as Error);
      }
    });
    ws.on('ping', () => {
      if (this.ws === ws) this.alive();
    });
    ws.on('unexpected-response', (_req, res) => {
      this.o.onError?.(new Error(`${url}: upgrade answered ${res.statusCode}`));
      ws.terminate();
    });
    ws.on('error', () => undefined); // the close that follows says what happens next
    ws.on('close', (code, reason) => {
      if (this.ws !== ws) return;
      this.stopTimers();
      this.ws = null;
      this.again(code, String(reason), !open);
    });
  }

  /** A frame came: the connection lives (checked by a timer, not one timer per frame). */
  private alive(): void {
    this.lastSeen = Date.now();
    if (this.silence) return;
    const limit = this.o.silenceMs ?? 30_000;
    this.silence = setInterval(
      () => {
        if (Date.now() - this.lastSeen <= limit) return;
        this.stats.silences++;
        this.ws?.terminate(); // its close reconnects
      },
      Math.max(20, Math.floor(limit / 4)),
    );
  }
  private lastSeen = 0;

  private stopTimers(): void {
    if (this.pinger) clearInterval(this.pinger);
    if (this.silence) clearInterval(this.silence);
    this.pinger = this.silence = null;
  }

  /** After a close: end on a fatal code, else reconnect (same node once, then the next ones). */
  private again(code: number, reason: string, failedToOpen: boolean): void {
    if (this.ended) return;
    if (FATAL.has(code)) {
      this.o.onError?.(new Error(`channel closed ${code}: ${reason}`));
      this.close();
      return;
    }
    this.o.onReconnect?.(code, reason);
    // 1001: the node stops. A failed open, or a second failure on this node: try the next one.
    if (code === 1001 || failedToOpen || ++this.failuresHere > 1) {
      this.at = (this.at + 1) % this.urls.length;
      this.failuresHere = 0;
    }
    const wait = this.delay;
    this.delay = Math.min(this.o.maxBackoffMs ?? 5000, this.delay * 2);
    this.retry = setTimeout(
      async () => {
        this.retry = null;
        try {
          await this.beforeReconnect(code);
        } catch (e) {
          this.o.onError?.(e as Error);
        }
        void this.connect();
      },
      Math.max(wait, this.awayUntil - Date.now()),
    );
  }

  /** Sends a frame if the connection is open. */
  protected send(v: unknown): void {
    if (this.ws?.readyState === WebSocket.OPEN) this.ws.send(typeof v === 'string' ? v : JSON.stringify(v));
  }

  /** Drops the connection now, without a close handshake (a forced disconnect); the channel reconnects after `awayMs` at the earliest. */
  disconnect(awayMs = 0): void {
    this.awayUntil = Date.now() + awayMs;
    this.ws?.terminate();
  }
  private awayUntil = 0;

  /** Ends the channel. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.o.signal?.removeEventListener('abort', this.onAbort);
    this.stopTimers();
    if (this.retry) clearTimeout(this.retry);
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      try {
        ws.close(1000);
      } catch {
        /* not open yet */
      }
      setTimeout(() => ws.terminate(), 1000).unref();
    }
    this.finish();
  }
}

// A PostgreSQL LISTEN connection of its own, for one channel or several (`subscribe`: a node's read
// cache and its front door's markets share one connection): hands each notification to its channel's
// `onPayload`, reconnects after a loss, and calls each channel's `onGap` whenever its notifications
// may have been missed (before it listens again). `sync()` waits until every notification committed
// before the call has been handed over: PostgreSQL delivers a session's notifications in commit
// order, its own included and whatever their channels, so a notification of our own sent now
// arrives after all of them.
import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** What one channel's notifications go to. */
export interface ChannelHandler {
  onPayload(payload: string): void;
  /** Notifications may have been missed (connection lost or not yet listening). */
  onGap(): void;
}

export interface NotifyListenerOptions extends Partial<ChannelHandler> {
  url: string;
  /** The channel `sync()`'s tokens go through; with `onPayload` and `onGap`, its first subscription. */
  channel: string;
  log: { warn(o: object, m?: string): void };
  reconnectMs?: number;
  syncTimeoutMs?: number;
}

const SYNC = 'sync:';

interface Channel extends ChannelHandler {
  /** LISTEN done on the current connection, and its gap reported. */
  live: boolean;
}

export class NotifyListener {
  private client: pg.Client | null = null;
  private closed = false;
  private live = false;
  private waiting = new Map<string, () => void>();
  private channels = new Map<string, Channel>();

  constructor(private o: NotifyListenerOptions) {
    if (o.onPayload && o.onGap) this.subscribe(o.channel, { onPayload: o.onPayload, onGap: o.onGap });
  }

  /** Listening now: what was committed before the last `onGap` is being reported (every channel subscribed by `start`). */
  get listening(): boolean {
    return this.live;
  }

  /**
   * Hands `channel`'s notifications to `handler` from now on; `listening()` tells whether they are
   * being received (its LISTEN done on the live connection, and the gap before it reported).
   * `listened` resolves once it is, or at once when no connection is live (the channel then
   * listens with the next one): a module that subscribes while the node starts waits for it, so
   * that the node does not serve from memory that the channel's first gap then drops.
   */
  subscribe(channel: string, handler: ChannelHandler): { listening(): boolean; listened: Promise<void> } {
    if (this.channels.has(channel)) throw new Error(`notifications of ${channel}: already subscribed`);
    const ch: Channel = { ...handler, live: false };
    this.channels.set(channel, ch);
    const client = this.client;
    const listened = client && this.live ? this.listenOn(client, channel, ch).catch((err) => this.lost(err, client)) : Promise.resolve();
    return { listening: () => ch.live && this.live, listened };
  }

  private async listenOn(client: pg.Client, channel: string, ch: Channel): Promise<void> {
    await client.query(`listen "${channel}"`);
    if (this.closed || this.client !== client) return;
    ch.onGap(); // what changed before we listened was not reported
    ch.live = true;
  }

  async start(): Promise<void> {
    await this.connect().catch((err) => this.lost(err));
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.url, application_name: `listen:${this.o.channel}` });
    this.client = client;
    client.on('notification', (n) => {
      const payload = n.payload ?? '';
      if (n.channel === this.o.channel && payload.startsWith(SYNC)) {
        this.waiting.get(payload)?.();
        return;
      }
      this.channels.get(n.channel)?.onPayload(payload);
    });
    client.on('error', (err) => this.lost(err, client));
    client.on('end', () => this.lost(new Error('connection ended'), client));
    await client.connect();
    // One statement for every channel subscribed so far (the sync channel's tokens included).
    const subs = [...this.channels.values()];
    const names = new Set([this.o.channel, ...this.channels.keys()]);
    await client.query([...names].map((c) => `listen "${c}";`).join(' '));
    if (this.closed || this.client !== client) return;
    for (const ch of subs) {
      ch.onGap(); // what changed before we listened was not reported
      ch.live = true;
    }
    this.live = true;
    // Channels subscribed while that statement ran.
    for (const [name, ch] of this.channels) if (!ch.live) void this.listenOn(client, name, ch).catch((err) => this.lost(err, client));
  }

  private lost(err: unknown, client = this.client): void {
    if (!client || client !== this.client) return;
    this.client = null;
    const wasLive = this.live;
    this.live = false;
    for (const ch of this.channels.values()) {
      ch.live = false;
      ch.onGap();
    }
    for (const done of this.waiting.values()) done();
    this.waiting.clear();
    client?.end().catch(() => undefined);
    if (this.closed) return;
    if (wasLive) this.o.log.warn({ err, channels: [...this.channels.keys()] }, 'notifications: connection lost; reconnecting');
    setTimeout(() => {
      if (!this.closed && !this.client) this.connect().catch((e) => this.lost(e));
    }, this.o.reconnectMs ?? 1000).unref();
  }

  /** The sync whose token is out (sent, not yet back), and the one that waits to go after it. */
  private out: Promise<void> | null = null;
  private next: Promise<void> | null = null;

  /**
   * Resolves once every notification committed before the call has reached `onPayload` (or, when
   * the connection is lost or the wait times out, after `onGap`). Callers share tokens: a caller
   * while one is out waits for the next, which goes once that one is back and answers everyone who
   * came meanwhile (its token is sent after all of their calls). One at a time on the connection,
   * each sync took its turn behind every other: with 8 webhook deliveries in flight, ~19 ms of a
   * delivery's ~130 ms.
   */
  sync(): Promise<void> {
    if (!this.client || !this.live) return Promise.resolve();
    if (this.next) return this.next;
    if (!this.out) return this.send();
    const next = this.out.then(() => {
      this.next = null;
      return this.send();
    });
    this.next = next;
    return next;
  }

  private send(): Promise<void> {
    const out = this.syncOnce().finally(() => {
      if (this.out === out) this.out = null;
    });
    this.out = out;
    return out;
  }

  private async syncOnce(): Promise<void> {
    const client = this.client;
    if (!client || !this.live) return;
    const token = SYNC + randomUUID();
    const arrived = new Promise<void>((resolve) => this.waiting.set(token, resolve));
    const gap = () => {
      for (const ch of this.channels.values()) ch.onGap();
    };
    const timer = setTimeout(() => {
      gap();
      this.waiting.get(token)?.();
    }, this.o.syncTimeoutMs ?? 2000);
    try {
      await client.query('select pg_notify($1, $2)', [this.o.channel, token]);
      await arrived;
    } catch {
      gap();
    } finally {
      clearTimeout(timer);
      this.waiting.delete(token);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    const c = this.client;
    this.client = null;
    for (const done of this.waiting.values()) done();
    await c?.end().catch(() => undefined);
  }
}

// Account-change subscriptions (`accountSubscribe`) on a Solana RPC's WebSocket, with a cost per
// subscription that does not grow with how many there are. @solana/web3.js's Connection walks
// every subscription it holds (an async call each) on every subscribe, answer and unsubscribe:
// N subscriptions cost O(N²), and a reconnect with 10,000 of them freezes the event loop. Here
// each account has one entry, found by its address and by the server's subscription id; a
// reconnect subscribes every entry once again.
import WebSocket from 'ws';

/** An account as a notification carries it (base64 encoding): what `holdingOf` unpacks. */
export interface NotifiedAccount {
  data: Buffer;
  owner: string;
  lamports: number;
  executable: boolean;
}

type Answer = (err: Error | null, result?: unknown) => void;

export type AccountListener = (account: NotifiedAccount | null, slot: number) => void;

interface Entry {
  account: string;
  listeners: Set<AccountListener>;
  /** the server's subscription id on the current connection; null while not (yet) subscribed */
  serverId: number | null;
}

export interface AccountSubscriptionsOptions {
  commitment?: 'processed' | 'confirmed' | 'finalized';
  /** first pause before reconnecting (doubles up to `maxReconnectMs`) */
  reconnectMs?: number;
  maxReconnectMs?: number;
  /** an RPC call on the socket not answered this long fails (and the socket is dropped); also bounds the handshake */
  callTimeoutMs?: number;
  /**
   * A WebSocket ping this often (default 15 s); a socket that answered nothing (no pong, no message)
   * since the last one is dropped and made again. A connection cut silently (a proxy or NAT that
   * forgot it) sends no close: without this, its subscriptions would stay quiet for good.
   */
  pingMs?: number;
  log?: { warn(o: object, m: string): void };
}

/** The WebSocket endpoint of an RPC URL, as @solana/web3.js derives it (a port given: the next one). */
export function websocketUrlOf(rpcUrl: string): string {
  const u = new URL(rpcUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  if (u.port) u.port = String(Number(u.port) + 1);
  return u.toString();
}

export class AccountSubscriptions {
  private readonly entries = new Map<string, Entry>();
  private readonly byServerId = new Map<number, Entry>();
  /** Calls in flight by JSON-RPC id. Answered synchronously, as their message is read: a notification read in the same chunk right after a subscription's answer finds it. */
  private readonly calls = new Map<number, { done: Answer; timer: NodeJS.Timeout }>();
  private socket: WebSocket | null = null;
  private open = false;
  private nextId = 1;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private pause: number;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly o: AccountSubscriptionsOptions = {},
  ) {
    this.pause = o.reconnectMs ?? 500;
  }

  /** How many accounts are watched (one server subscription each). */
  get size(): number {
    return this.entries.size;
  }

  /** Calls `listener` on every change of `account` from now on; returns what stops it. */
  watch(account: string, listener: AccountListener): () => void {
    if (this.closed) throw new Error('account subscriptions are closed');
    let e = this.entries.get(account);
    if (!e) {
      e = { account, listeners: new Set(), serverId: null };
      this.entries.set(account, e);
      if (this.open) this.subscribe(e);
      else this.connect();
    }
    e.listeners.add(listener);
    const entry = e;
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size || this.entries.get(account) !== entry) return;
      this.entries.delete(account);
      if (entry.serverId !== null) this.unsubscribe(entry.serverId);
      entry.serverId = null;
      if (!this.entries.size) this.disconnect();
    };
  }

  /** Stops every subscription and the socket; nothing reconnects. */
  close(): void {
    this.closed = true;
    this.entries.clear();
    this.disconnect();
  }

  private connect(): void {
    if (this.socket || this.reconnectTimer || this.closed) return;
    const ws = new WebSocket(this.url, { perMessageDeflate: false, handshakeTimeout: this.o.callTimeoutMs ?? 10_000 });
    this.socket = ws;
    let heard = true;
    let pinger: NodeJS.Timeout | null = null;
    ws.on('open', () => {
      if (this.socket !== ws) return;
      this.open = true;
      this.pause = this.o.reconnectMs ?? 500;
      pinger = setInterval(() => {
        if (!heard) return ws.terminate(); // silent since the last ping: the close below makes a new one
        heard = false;
        ws.ping();
      }, this.o.pingMs ?? 15_000);
      pinger.unref();
      for (const e of this.entries.values()) this.subscribe(e);
    });
    ws.on('pong', () => (heard = true));
    ws.on('message', (data) => {
      heard = true;
      this.message(String(data));
    });
    ws.on('error', (err) => {
      if (this.socket === ws) this.o.log?.warn({ err: err.message, url: this.url }, 'RPC WebSocket error');
    });
    ws.on('close', () => {
      if (pinger) clearInterval(pinger);
      if (this.socket !== ws) return;
      this.dropped();
      if (this.entries.size && !this.closed) {
        this.reconnectTimer = setTimeout(() => {
          this.reconnectTimer = null;
          if (this.entries.size) this.connect();
        }, this.pause);
        this.reconnectTimer.unref();
        this.pause = Math.min(this.pause * 2, this.o.maxReconnectMs ?? 5000);
      }
    });
  }

  /** The socket is gone: nothing is subscribed on the server any more, every call in flight fails. */
  private dropped(): void {
    this.socket = null;
    this.open = false;
    this.byServerId.clear();
    for (const e of this.entries.values()) e.serverId = null;
    for (const [, c] of this.calls) {
      clearTimeout(c.timer);
      c.done(new Error('RPC WebSocket closed'));
    }
    this.calls.clear();
  }

  private disconnect(): void {
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const ws = this.socket;
    this.dropped();
    ws?.terminate();
  }

  private call(method: string, params: unknown[], done: Answer): void {
    const ws = this.socket;
    if (!ws || !this.open) return done(new Error('RPC WebSocket not open'));
    const id = this.nextId++;
    const ms = this.o.callTimeoutMs ?? 10_000;
    const timer = setTimeout(() => {
      this.calls.delete(id);
      done(new Error(`${method}: no answer in ${ms} ms`));
      if (this.socket === ws) ws.terminate(); // a socket that stopped answering: start over
    }, ms);
    timer.unref();
    this.calls.set(id, { done, timer });
    ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
  }

  private subscribe(e: Entry): void {
    const ws = this.socket;
    this.call('accountSubscribe', [e.account, { encoding: 'base64', commitment: this.o.commitment ?? 'confirmed' }], (err, id) => {
      if (err || typeof id !== 'number') {
        // The socket closed (every entry is subscribed again on the next one) or the RPC refused.
        if (this.socket === ws && this.open)
          this.o.log?.warn({ err: err?.message ?? `answered ${JSON.stringify(id)}`, account: e.account }, 'accountSubscribe failed');
        return;
      }
      // Stopped meanwhile, or another socket since: this subscription is nobody's.
      if (this.entries.get(e.account) !== e || this.socket !== ws) {
        if (this.socket === ws) this.unsubscribe(id);
        return;
      }
      e.serverId = id;
      this.byServerId.set(id, e);
    });
  }

  private unsubscribe(serverId: number): void {
    this.byServerId.delete(serverId);
    this.call('accountUnsubscribe', [serverId], () => undefined);
  }

  private message(text: string): void {
    let m: { id?: number; result?: unknown; error?: { message?: string }; method?: string; params?: any };
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof m.id === 'number') {
      const c = this.calls.get(m.id);
      if (!c) return;
      this.calls.delete(m.id);
      clearTimeout(c.timer);
      if (m.error) c.done(new Error(m.error.message ?? 'RPC error'));
      else c.done(null, m.result);
      return;
    }
    if (m.method !== 'accountNotification') return;
    const e = this.byServerId.get(m.params?.subscription);
    const r = m.params?.result;
    if (!e || !r) return;
    const v = r.value;
    const account: NotifiedAccount | null =
      v && Array.isArray(v.data)
        ? {
            data: Buffer.from(String(v.data[0]), 'base64'),
            owner: String(v.owner),
            lamports: Number(v.lamports),
            executable: !!v.executable,
          }
        : null;
    const slot = Number(r.context?.slot ?? 0);
    for (const l of e.listeners) {
      try {
        l(account, slot);
      } catch (err) {
        this.o.log?.warn({ err, account: e.account }, 'an account listener threw');
      }
    }
  }
}

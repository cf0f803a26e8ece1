// Cancel-on-disconnect. A wallet opts in with its first `POST /v1/heartbeats` and then keeps sending
// them; once it has been silent for CLOB_HEARTBEAT_TIMEOUT_MS, every resting (or delayed) order it
// owns is cancelled through the books' normal CancelOrders command with reason `heartbeat_timeout`
// (the ledger shows `order_cancelled` with that reason). `{ "enabled": false }` opts out.
//
// Cluster: heartbeats live in PostgreSQL (`clob_heartbeats`, stamped with the database's clock, so
// node clocks do not matter) and any node may receive them. Every node runs a HeartbeatClock; an
// expiry is claimed by one conditional UPDATE (`state` armed → expiring, `for update skip locked`),
// so exactly one node acts on it. The claimer asks each book to cancel with an idempotency key made
// of the wallet, the market and the silent heartbeat's time: a node that dies mid-way leaves the
// claim `expiring`, another node takes it over after a lease and its asks are answered from the
// command inbox, never applied twice. After an expiry the wallet is disarmed (`expired`) until its
// next heartbeat arms it again, so orders placed afterwards without heartbeats stay.
import { channel, type Asker } from '../runtime/asker.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';

import type { Db } from '../db.ts';

export const HEARTBEAT_CANCEL_REASON = 'heartbeat_timeout';

export interface HeartbeatStatus {
  wallet: string;
  enabled: boolean;
  state: 'armed' | 'expiring' | 'expired' | 'off';
  timeout_ms: number;
  last_heartbeat_at: string | null;
  expires_at: string | null;
  last_expired_at: string | null;
  cancelled_at_last_expiry: number;
}

const iso = (v: unknown) => (v === null || v === undefined ? null : new Date(v as string).toISOString());

function status(r: any): HeartbeatStatus {
  return {
    wallet: r.wallet,
    enabled: r.state === 'armed' || r.state === 'expiring',
    state: r.state,
    timeout_ms: Number(r.timeout_ms),
    last_heartbeat_at: iso(r.last_seen_at),
    expires_at: r.state === 'armed' || r.state === 'expiring' ? iso(r.expires_at) : null,
    last_expired_at: iso(r.expired_at),
    cancelled_at_last_expiry: Number(r.cancelled ?? 0),
  };
}

/** Records a heartbeat (arming the wallet) or, with enabled=false, opts the wallet out. */
export async function recordHeartbeat(db: Db, wallet: string, timeoutMs: number, enabled = true): Promise<HeartbeatStatus> {
  const state = enabled ? 'armed' : 'off';
  const rows = await db.execute(
    `insert into clob_heartbeats (wallet, owner_lc, state, timeout_ms, last_seen_at, expires_at, beats, created_at)
     values (?, ?, ?, ?, clock_timestamp(), clock_timestamp() + make_interval(secs => ? / 1000.0), 1, clock_timestamp())
     on conflict (wallet) do update set state = excluded.state, timeout_ms = excluded.timeout_ms,
       last_seen_at = excluded.last_seen_at, expires_at = excluded.expires_at, beats = clob_heartbeats.beats + 1
     returning *`,
    [wallet, wallet.toLowerCase(), state, timeoutMs, timeoutMs],
  );
  return status(rows[0]);
}

export async function heartbeatStatus(db: Db, wallet: string): Promise<HeartbeatStatus | null> {
  const rows = await db.execute('select * from clob_heartbeats where wallet = ?', [wallet]);
  return rows.length ? status(rows[0]) : null;
}

export interface HeartbeatClockOptions {
  db: () => Db;
  asker: Asker;
  bookTopic: string;
  nodeId: string;
  /** How often to look for silent wallets (default: a quarter of the timeout, at most 1 s). */
  everyMs?: number;
  timeoutMs: number;
  /** A claim older than this (its node died mid-way) is taken over (default 30 s). */
  leaseMs?: number;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void };
  onExpiry?(wallet: string, cancelled: number): void;
}

export class HeartbeatClock {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<unknown> | null = null;

  constructor(private o: HeartbeatClockOptions) {}

  get everyMs(): number {
    return this.o.everyMs ?? Math.max(50, Math.min(1000, Math.floor(this.o.timeoutMs / 4)));
  }

  start(): void {
    const tick = async () => {
      if (this.stopped) return;
      this.running = this.tick().catch((err) => this.o.log.warn({ err }, 'heartbeat clock tick failed'));
      await this.running;
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(tick, this.everyMs);
    };
    this.timer = setTimeout(tick, this.everyMs);
  }

  /** Claims the silent wallets (at most 100 a tick) and cancels their orders; returns what it did. */
  async tick(): Promise<{ wallet: string; cancelled: number }[]> {
    const lease = this.o.leaseMs ?? 30_000;
    const claimed: { wallet: string; last_seen_at: string; seen_ms: string }[] = await this.o.db().execute(
      `update clob_heartbeats h set state = 'expiring', claimed_by = ?, claimed_at = clock_timestamp()
       where h.wallet in (
         select wallet from clob_heartbeats
         where expires_at <= clock_timestamp()
           and (state = 'armed' or (state = 'expiring' and claimed_at < clock_timestamp() - make_interval(secs => ? / 1000.0)))
         order by expires_at limit 100 for update skip locked)
       returning h.wallet, h.last_seen_at, (extract(epoch from h.last_seen_at) * 1000)::bigint::text as seen_ms`,
      [this.o.nodeId, lease],
    );
    const out: { wallet: string; cancelled: number }[] = [];
    for (const c of claimed) {
      try {
        const n = await this.expire(c.wallet, c.seen_ms);
        out.push({ wallet: c.wallet, cancelled: n });
      } catch (err) {
        // The claim stays `expiring`; after the lease this node or another one tries again.
        this.o.log.warn({ err, wallet: c.wallet }, 'cancel-on-disconnect failed; retried after the lease');
      }
    }
    return out;
  }

  private async expire(wallet: string, seenMs: string): Promise<number> {
    const markets: string[] = (
      await this.o
        .db()
        .execute("select distinct market from open_orders where owner_lc = ? and status in ('LIVE', 'DELAYED')", [wallet.toLowerCase()])
    ).map((r: any) => r.market);
    const now = Date.now();
    const replies = markets.length
      ? await this.o.asker.askManyTo(
          channel<BookProtocol>(this.o.bookTopic),
          markets.map((m) => ({
            key: m,
            id: `heartbeat:${wallet}:${m}:${seenMs}`,
            cmd: { type: 'CancelOrders' as const, owner: wallet, all: true, now, reason: HEARTBEAT_CANCEL_REASON },
          })),
        )
      : [];
    const cancelled = replies.reduce((a, r) => a + (r?.canceled?.length ?? 0), 0);
    // Only the claim of this very silence is closed: a heartbeat that came meanwhile re-armed the wallet.
    await this.o.db().execute(
      `update clob_heartbeats set state = 'expired', expired_at = clock_timestamp(), cancelled = ?
       where wallet = ? and state = 'expiring' and (extract(epoch from last_seen_at) * 1000)::bigint = ?`,
      [cancelled, wallet, seenMs],
    );
    this.o.log.info({ wallet, markets: markets.length, cancelled }, 'heartbeats stopped: resting orders cancelled');
    this.o.onExpiry?.(wallet, cancelled);
    return cancelled;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

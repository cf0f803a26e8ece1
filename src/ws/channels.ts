// The `market` and `user` channels' client frames (docs/ws.md): subscribe / unsubscribe by token
// ids (with resume by last_seq), the user channel's auth, the PING heartbeat. Every frame is
// bounded before any work: its size by ws (maxPayload), its rate by the connection's bucket, its
// fields here.
import jwt from 'jsonwebtoken';
import type { MarketFeed } from '../clob/market-feed.ts';
import type { ClobTokens } from '../clob/sign-in.ts';
import { CLOSE, type Connection, type WsLimits } from './connection.ts';

const TOKEN_ID = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const WALLET = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
/** Most token ids one subscribe or unsubscribe frame may name. */
export const MAX_ASSETS_PER_FRAME = 100;

type Frame = Record<string, unknown>;

/** A text frame as a JSON object with a string `type`, or null (malformed). */
function parse(text: string): Frame | null {
  try {
    const v = JSON.parse(text);
    return v && typeof v === 'object' && !Array.isArray(v) && typeof v.type === 'string' ? v : null;
  } catch {
    return null;
  }
}

function assetIds(c: Connection, f: Frame): string[] | null {
  const ids = f.assets_ids;
  if (!Array.isArray(ids) || !ids.length || ids.length > MAX_ASSETS_PER_FRAME || !ids.every((x) => typeof x === 'string')) {
    c.drop(CLOSE.malformed, `assets_ids must be an array of 1 to ${MAX_ASSETS_PER_FRAME} token ids`);
    return null;
  }
  const bad = ids.filter((x) => !TOKEN_ID.test(x));
  if (bad.length) {
    c.error(
      `unknown token ${bad
        .slice(0, 5)
        .map((b) => JSON.stringify(b.slice(0, 50)))
        .join(', ')}: a token id is a base58 address`,
    );
  }
  return [...new Set(ids.filter((x) => TOKEN_ID.test(x)))];
}

/** Per connection of the market channel: subscribed assets by market. */
export class MarketChannel {
  private subs = new Map<string, Set<string>>();
  private count = 0;

  constructor(
    private c: Connection,
    private feed: MarketFeed,
    private limits: WsLimits,
  ) {}

  onFrame(text: string): void {
    const f = parse(text);
    if (!f) {
      this.c.drop(CLOSE.malformed, 'malformed frame: expected PING or a JSON object with a type');
      return;
    }
    if (f.type === 'subscribe') this.c.serial(() => this.subscribe(f));
    else if (f.type === 'unsubscribe') this.c.serial(async () => this.unsubscribe(f));
    else this.c.error(`unknown message type ${JSON.stringify(String(f.type).slice(0, 40))} (subscribe, unsubscribe)`);
  }

  private async subscribe(f: Frame): Promise<void> {
    const ids = assetIds(this.c, f);
    if (!ids?.length) return;
    const last = f.last_seq && typeof f.last_seq === 'object' && !Array.isArray(f.last_seq) ? (f.last_seq as Record<string, unknown>) : {};
    const feeds = f.feed && typeof f.feed === 'object' && !Array.isArray(f.feed) ? (f.feed as Record<string, unknown>) : {};
    const fresh = ids.filter((a) => ![...this.subs.values()].some((s) => s.has(a)));
    if (this.count + fresh.length > this.limits.maxAssets) {
      this.c.drop(CLOSE.tooManySubscriptions, `at most ${this.limits.maxAssets} subscribed assets per connection`);
      return;
    }
    const markets = await this.feed.resolve(ids);
    const unknown = ids.filter((a) => !markets.has(a));
    if (unknown.length)
      this.c.error(
        `unknown token ${unknown.slice(0, 5).join(', ')}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ''}: no market trades it`,
      );
    const byMarket = new Map<string, string[]>();
    for (const a of ids) {
      const m = markets.get(a);
      if (m) byMarket.set(m.condition_id, [...(byMarket.get(m.condition_id) ?? []), a]);
    }
    if (this.c.closed) return;
    for (const [id, assets] of byMarket) {
      const set = this.subs.get(id) ?? new Set();
      for (const a of assets)
        if (!set.has(a)) {
          set.add(a);
          this.count++;
        }
      this.subs.set(id, set);
      const n = last[id];
      const feed = feeds[id];
      const resume =
        Number.isSafeInteger(n) && (n as number) >= 0
          ? { lastSeq: n as number, feed: typeof feed === 'string' ? feed : undefined }
          : undefined;
      this.feed.subscribe(this.c, markets.get(assets[0])!, assets, resume);
    }
  }

  private unsubscribe(f: Frame): void {
    const ids = assetIds(this.c, f);
    if (!ids) return;
    for (const [id, set] of this.subs) {
      for (const a of ids) if (set.delete(a)) this.count--;
      if (!set.size) {
        this.subs.delete(id);
        this.feed.unsubscribe(this.c, id);
      }
    }
  }

  close(): void {
    for (const id of this.subs.keys()) this.feed.unsubscribe(this.c, id);
    this.subs.clear();
  }
}

/** The wallet of an order-book bearer token, or why not. */
export function walletOf(tokens: ClobTokens, token: string): { wallet: string; exp: number } | { error: string } {
  try {
    const claims = jwt.verify(token, tokens.secretKey, { algorithms: ['HS256'] }) as { sub?: unknown; scope?: unknown; exp?: number };
    if (typeof claims.sub !== 'string' || !WALLET.test(claims.sub) || claims.scope !== 'clob') return { error: 'not an order-book token' };
    return { wallet: claims.sub, exp: claims.exp ?? Infinity };
  } catch (e) {
    return {
      error:
        e instanceof jwt.TokenExpiredError
          ? 'the token expired (POST /v1/auth/token)'
          : 'a valid bearer token is required (POST /v1/auth/token)',
    };
  }
}

/** Per connection of the user channel: the wallet once authenticated. */
export class UserChannel {
  wallet: string | null = null;
  private expiry: NodeJS.Timeout | null = null;

  constructor(
    private c: Connection,
    private feed: MarketFeed,
    private tokens: ClobTokens,
    authTimeoutMs: number,
  ) {
    this.expiry = setTimeout(() => {
      if (!this.wallet) c.drop(CLOSE.unauthorized, 'unauthorized: no token (Authorization header or an auth message)');
    }, authTimeoutMs);
    this.expiry.unref();
  }

  /** Authenticates with a bearer token; a missing, invalid or expired one closes 4401. */
  auth(token: string | undefined): void {
    const r = token ? walletOf(this.tokens, token) : { error: 'a bearer token is required (POST /v1/auth/token)' };
    if ('error' in r) {
      this.c.drop(CLOSE.unauthorized, `unauthorized: ${r.error}`);
      return;
    }
    if (this.wallet) return;
    this.wallet = r.wallet;
    if (this.expiry) clearTimeout(this.expiry);
    const left = r.exp * 1000 - Date.now();
    if (Number.isFinite(left)) {
      this.expiry = setTimeout(
        () => this.c.drop(CLOSE.unauthorized, 'unauthorized: the token expired (sign in again)'),
        Math.min(left, 2 ** 31 - 1),
      );
      this.expiry.unref();
    }
    this.feed.addWallet(r.wallet, this.c);
    this.c.deliver(JSON.stringify({ event_type: 'auth', wallet: r.wallet, timestamp: String(Date.now()) }));
  }

  onFrame(text: string): void {
    const f = parse(text);
    if (!f) {
      this.c.drop(CLOSE.malformed, 'malformed frame: expected PING or a JSON object with a type');
      return;
    }
    if (f.type === 'auth') {
      this.auth(typeof f.token === 'string' ? f.token.slice(0, 4096) : undefined);
      return;
    }
    if (!this.wallet) {
      this.c.drop(CLOSE.unauthorized, 'unauthorized: authenticate first ({"type":"auth","token":…})');
      return;
    }
    if (f.type !== 'subscribe' && f.type !== 'unsubscribe')
      this.c.error(`unknown message type ${JSON.stringify(String(f.type).slice(0, 40))} (auth)`);
    // subscribe / unsubscribe: the user channel sends the wallet's messages of every market; nothing to do.
  }

  close(): void {
    if (this.expiry) clearTimeout(this.expiry);
    if (this.wallet) this.feed.removeWallet(this.wallet, this.c);
  }
}

// Token buckets in memory, per node (a cluster of N nodes lets through up to N times the rate):
// per client IP on the order book's routes and on sign-in, per signed-in wallet on the bearer
// routes. A bucket that has filled up again is the same as no bucket, so idle ones are dropped;
// past `maxKeys` buckets the oldest are dropped too, so memory stays bounded whatever the keys.
import type { Context, Next } from 'koa';
import { edgeError } from './errors.ts';

export interface Rate {
  /** Tokens added per second; 0 turns the limit off. */
  perSecond: number;
  /** Most tokens a bucket holds (the burst it allows after a quiet spell). */
  burst: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private buckets = new Map<string, Bucket>();
  private sweptAt = 0;

  constructor(
    readonly rate: Rate,
    readonly maxKeys = 100_000,
    private now: () => number = () => performance.now(),
  ) {}

  get size(): number {
    return this.buckets.size;
  }

  /** Takes one token of `key`: 0 when allowed, else the seconds until a token is there. */
  take(key: string): number {
    if (this.rate.perSecond <= 0) return 0;
    const now = this.now();
    this.sweep(now);
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.rate.burst, at: now };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.rate.burst, b.tokens + ((now - b.at) / 1000) * this.rate.perSecond);
      b.at = now;
      // Most recently used last: the oldest are the first dropped when there are too many.
      this.buckets.delete(key);
      this.buckets.set(key, b);
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return (1 - b.tokens) / this.rate.perSecond;
  }

  /** Drops buckets that are full again (at most once a second), then the oldest beyond maxKeys. */
  private sweep(now: number) {
    if (now - this.sweptAt >= 1000 || this.buckets.size >= this.maxKeys) {
      this.sweptAt = now;
      const fullAfterMs = (b: Bucket) => ((this.rate.burst - b.tokens) / this.rate.perSecond) * 1000;
      for (const [k, b] of this.buckets) if (now - b.at >= fullAfterMs(b)) this.buckets.delete(k);
    }
    while (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
  }
}

/** 429 with Retry-After (whole seconds) and the route's rejection shape when `key` has no token left. */
export function limit(limiter: RateLimiter, key: (ctx: Context) => string | undefined, what: string) {
  return async (ctx: Context, next: Next) => {
    const k = key(ctx);
    const wait = k === undefined ? 0 : limiter.take(k);
    if (wait > 0) {
      const seconds = Math.max(1, Math.ceil(wait));
      ctx.set('Retry-After', String(seconds));
      throw edgeError(
        ctx,
        429,
        'rate_limited',
        `too many requests ${what}: at most ${limiter.rate.perSecond}/s (bursts of ${limiter.rate.burst}); retry after ${seconds} s`,
        'RATE_LIMITED',
      );
    }
    await next();
  };
}

/** The limiters of one node. */
export interface RateLimits {
  /** Every /v1 request, by client IP (ctx.ip: the forwarded one only with TRUST_PROXY=1). */
  ip: RateLimiter;
  /** Bearer /v1 requests, by signed-in wallet. */
  wallet: RateLimiter;
  /** POST /v1/auth/token, by client IP. */
  signIn: RateLimiter;
}

export function rateLimits(o: { ip: Rate; wallet: Rate; signIn: Rate }): RateLimits {
  return { ip: new RateLimiter(o.ip), wallet: new RateLimiter(o.wallet), signIn: new RateLimiter(o.signIn) };
}

/** Limits that never refuse (tests and tools that build an app without settings). */
export const unlimited = (): RateLimits =>
  rateLimits({ ip: { perSecond: 0, burst: 0 }, wallet: { perSecond: 0, burst: 0 }, signIn: { perSecond: 0, burst: 0 } });

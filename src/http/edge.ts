// What the HTTP edge bounds, built once per node from its settings (README, "Settings"): whether
// forwarded headers are believed, the JSON body of ordinary routes and of the webhook, and the
// rate limiters. Route modules mount `body` / `webhookBody` after their guards (src/http/body.ts).
import type { Middleware } from 'koa';
import type { Config } from '../config.ts';
import { jsonBody, type BodyBounds } from './body.ts';
import { rateLimits, unlimited, type RateLimits } from './rate-limit.ts';

export interface Edge {
  trustProxy: boolean;
  bounds: BodyBounds;
  webhookBounds: BodyBounds;
  /** Reads the JSON body of every route but the webhook (mount it after the route's guards). */
  body: Middleware;
  /** Reads the webhook's JSON body (after its secret is checked). */
  webhookBody: Middleware;
  limits: RateLimits;
}

export function edgeFrom(http: Config['http']): Edge {
  const bounds = { bytes: http.bodyLimitBytes, depth: http.jsonMaxDepth };
  const webhookBounds = { bytes: http.webhookBodyLimitBytes, depth: http.jsonMaxDepth };
  return {
    trustProxy: http.trustProxy,
    bounds,
    webhookBounds,
    body: jsonBody(bounds),
    // The webhook schema checks every string it keeps (log lines, signatures) and strips the rest.
    webhookBody: jsonBody({ ...webhookBounds, checkStrings: false }),
    limits: rateLimits(http.rateLimits),
  };
}

/** The defaults without rate limits: for an app built outside a node. */
export function defaultEdge(): Edge {
  const e = edgeFrom({
    trustProxy: false,
    bodyLimitBytes: 128 * 1024,
    webhookBodyLimitBytes: 4 * 1024 * 1024,
    jsonMaxDepth: 64,
    rateLimits: { ip: { perSecond: 0, burst: 1 }, wallet: { perSecond: 0, burst: 1 }, signIn: { perSecond: 0, burst: 1 } },
  });
  return { ...e, limits: unlimited() };
}

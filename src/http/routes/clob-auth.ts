// Order-book sign-in (`POST /v1/auth/token`), the bearer check of every other /v1 route, and
// `GET /v1/config`.
import Router from '@koa/router';
import jwt from 'koa-jwt';
import type { Context, Next } from 'koa';
import { HttpError, zodMessage } from '../errors.ts';
import { signInBody, type ClobTokens } from '../../clob/sign-in.ts';
import { SignIns } from '../../clob/sign-ins.ts';
import type { Edge } from '../edge.ts';
import { limit } from '../rate-limit.ts';
import { VerifiedTokens, bearerOf } from '../verified-tokens.ts';
import { documentRoutes } from '../openapi.ts';
import * as api from '../../api/schemas.ts';

import type { Db } from '../../db.ts';

/** A wallet as a token may name it (the same bound as a sign-in's address). */
const WALLET = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

type Claims = { sub?: unknown; scope?: string; exp?: unknown; nbf?: unknown };
const verifiedBy = new WeakMap<ClobTokens, VerifiedTokens<Claims>>();

/**
 * Bearer tokens of the order book; ctx.state.wallet is the signed-in address. With `edge`, each
 * wallet's requests also take a token of its bucket (429 past RATE_LIMIT_WALLET_*).
 */
export function clobAuth(tokens: ClobTokens, edge?: Edge) {
  const verify = jwt({ secret: tokens.secretKey as any, algorithms: ['HS256'], key: 'clob' });
  const perWallet = edge ? limit(edge.limits.wallet, (ctx) => ctx.state.wallet, 'for this wallet') : null;
  // A token verified once is not verified again until it expires (src/http/verified-tokens.ts);
  // one cache per issuer, shared by every route group that checks its tokens.
  let verified = verifiedBy.get(tokens);
  if (!verified) verifiedBy.set(tokens, (verified = new VerifiedTokens()));
  return async (ctx: Context, next: Next) => {
    const token = bearerOf(ctx.header.authorization);
    const known = token === null ? undefined : verified.get(token);
    if (known) ctx.state.clob = known;
    else {
      try {
        await verify(ctx, async () => undefined);
      } catch {
        throw new HttpError(401, 'unauthorized', 'a valid bearer token is required (POST /v1/auth/token)');
      }
      if (token !== null) verified.add(token, ctx.state.clob as Claims);
    }
    const claims = ctx.state.clob as { sub?: unknown; scope?: string };
    if (typeof claims?.sub !== 'string' || !WALLET.test(claims.sub) || claims.scope !== 'clob')
      throw new HttpError(401, 'unauthorized', 'not an order-book token');
    ctx.state.wallet = claims.sub;
    if (perWallet) await perWallet(ctx, next);
    else await next();
  };
}

export function clobAuthRoutes(o: {
  tokens: ClobTokens;
  db: () => Db;
  config: () => Record<string, unknown>;
  edge: Edge;
  now?: () => number;
}) {
  const r = new Router({ prefix: '/v1' });
  const signIns = new SignIns({ db: o.db, tokens: o.tokens, now: o.now });
  const perIp = limit(o.edge.limits.signIn, (ctx) => ctx.ip || 'unknown', 'of sign-in from this address');

  // Rate-limited by IP before the body is read; the body's fields are bounded before any decoding.
  r.post('/auth/token', perIp, o.edge.body, async (ctx) => {
    const body = signInBody.safeParse(ctx.request.body);
    if (!body.success) throw new HttpError(400, 'invalid_request', zodMessage(body.error));
    const done = await signIns.signIn(body.data);
    if (!done.ok) throw new HttpError(401, 'unauthorized', done.reason);
    ctx.body = done.token;
  });

  r.get('/config', (ctx) => {
    ctx.body = o.config();
  });
  return r;
}

documentRoutes(
  {
    method: 'post',
    path: '/v1/auth/token',
    summary: 'Sign in: an ed25519 signature of `clob-auth:v1:<address>:<timestamp>` buys a bearer token',
    body: signInBody,
    responses: {
      200: { description: 'the bearer token', schema: api.accessToken },
      401: { description: 'stale, forged or reused message', schema: api.errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/config',
    summary: 'Collateral mint, settlement delegate, fee curve, token lifetime',
    responses: { 200: { description: 'the configuration', schema: api.clobConfig } },
  },
);

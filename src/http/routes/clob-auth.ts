// Order-book sign-in (`POST /v1/auth/token`), the bearer check of every other /v1 route, and
// `GET /v1/config`.
import Router from '@koa/router';
import jwt from 'koa-jwt';
import type { Context, Next } from 'koa';
import { HttpError, zodMessage } from '../errors.ts';
import { checkSignIn, signInBody, type ClobTokens } from '../../clob/sign-in.ts';
import { documentRoutes } from '../openapi.ts';
import * as api from '../openapi-schemas.ts';

type Db = { execute(sql: string, params?: unknown[]): Promise<any[]> };

/** Bearer tokens of the order book; ctx.state.wallet is the signed-in address. */
export function clobAuth(tokens: ClobTokens) {
  const verify = jwt({ secret: tokens.secretKey as any, algorithms: ['HS256'], key: 'clob' });
  return async (ctx: Context, next: Next) => {
    try {
      await verify(ctx, async () => undefined);
    } catch {
      throw new HttpError(401, 'unauthorized', 'a valid bearer token is required (POST /v1/auth/token)');
    }
    const claims = ctx.state.clob as { sub?: string; scope?: string };
    if (!claims?.sub || claims.scope !== 'clob') throw new HttpError(401, 'unauthorized', 'not an order-book token');
    ctx.state.wallet = claims.sub;
    await next();
  };
}

export function clobAuthRoutes(o: { tokens: ClobTokens; db: () => Db; config: () => Record<string, unknown>; now?: () => number }) {
  const r = new Router({ prefix: '/v1' });
  const now = o.now ?? (() => Math.floor(Date.now() / 1000));

  r.post('/auth/token', async (ctx) => {
    const body = signInBody.safeParse(ctx.request.body);
    if (!body.success) throw new HttpError(400, 'invalid_request', zodMessage(body.error));
    const check = checkSignIn(body.data, now());
    if (!check.ok) throw new HttpError(401, 'unauthorized', check.reason);
    // Each signed message once, across every node: the database says who was first.
    const rows = await o.db().execute(
      `insert into auth_signins (address, timestamp, created_at) values (?, ?, now()) on conflict do nothing returning address`,
      [body.data.address, body.data.timestamp],
    );
    if (!rows.length) throw new HttpError(401, 'unauthorized', 'this sign-in message was already used');
    if (Math.random() < 0.01) await o.db().execute(`delete from auth_signins where created_at < now() - interval '10 minutes'`);
    ctx.body = o.tokens.issue(body.data.address);
  });

  r.get('/config', (ctx) => { ctx.body = o.config(); });
  return r;
}

documentRoutes(
  { method: 'post', path: '/v1/auth/token', summary: 'Sign in: an ed25519 signature of `clob-auth:v1:<address>:<timestamp>` buys a bearer token', body: signInBody, responses: { 200: { description: 'the bearer token', schema: api.accessToken }, 401: { description: 'stale, forged or reused message', schema: api.errorBody } } },
  { method: 'get', path: '/v1/config', summary: 'Collateral mint, settlement delegate, fee curve, token lifetime', responses: { 200: { description: 'the configuration', schema: api.clobConfig } } },
);

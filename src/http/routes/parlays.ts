// Parlay routes (SPEC 4.1): validation and auth at the edge; the use cases live in src/parlay/.
import Router from '@koa/router';
import { z } from 'zod';
import { platformAuth, requireSuperuser, webhookAuth, type PlatformUser } from '../auth.ts';
import { badRequest, HttpError, notFound, zodMessage } from '../errors.ts';
import { webhookBody } from '../../parlay/webhook-schema.ts';
import { PARLAY_STATUSES } from '../../parlay/queries.ts';
import type { ParlayService } from '../../parlay/service.ts';
import { documentRoutes } from '../openapi.ts';
import * as api from '../openapi-schemas.ts';

const status = z.enum(PARLAY_STATUSES);
const amount = z.union([z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^\d{1,19}$/)]).transform((v) => v.toString());
const base58 = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 address');

export const vaultPatch = z.object({
  vault_address: base58.optional(),
  max_legs: z.number().int().min(2).max(255).optional(),
  max_payout_cap: amount.optional(),
  min_stake: amount.optional(),
  max_stake: amount.optional(),
  is_active: z.boolean().optional(),
}).strict().refine((v) => Object.keys(v).length > 0, 'give at least one of vault_address, max_legs, max_payout_cap, min_stake, max_stake, is_active');

export const parlaysRequest = {
  /** Not a parlay id: the same 404 as a missing parlay. */
  params: z.object({ parlayId: z.string().regex(/^\d{1,20}$/).meta({ description: 'on-chain parlay id (integer)' }) }),
  user: z.object({ status: status.optional() }),
  admin: z.object({
    status: status.optional(),
    wallet: z.string().min(1).max(64).optional(),
    page: z.coerce.number().int().min(1).default(1),
  }),
};

const parlayIdParam = (raw: string) => {
  if (!parlaysRequest.params.safeParse({ parlayId: raw }).success) throw notFound('parlay not found');
  return raw;
};

export function parlayRoutes(svc: ParlayService, opts: { jwtSecret: string; webhookSecret?: string }) {
  const r = new Router({ prefix: '/api/parlays' });
  const auth = platformAuth(opts.jwtSecret, (u) => svc.rememberUser(u));

  r.post('/webhooks/indexer/', webhookAuth(opts.webhookSecret), async (ctx) => {
    const parsed = webhookBody.safeParse(ctx.request.body);
    if (!parsed.success) throw badRequest(`malformed webhook body: ${zodMessage(parsed.error)}`, 'malformed_body');
    const txs = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
    const res = await svc.ingest(txs);
    if (res.deferred > 0) {
      throw new HttpError(503, 'deferred', `${res.deferred} transaction(s) reference parlays not created yet; retry later`, { processed: res.processed, skipped: res.skipped });
    }
    ctx.body = { processed: res.processed, skipped: res.skipped };
  });

  r.get('/vault/', async (ctx) => { ctx.body = { data: await svc.vault() }; });
  r.patch('/vault/', auth, requireSuperuser, async (ctx) => {
    const body = vaultPatch.parse(ctx.request.body ?? {});
    ctx.body = { data: await svc.patchVault(body) };
  });
  r.post('/vault/sync/', auth, requireSuperuser, async (ctx) => { ctx.body = { data: await svc.syncVault() }; });

  r.get('/user/', auth, async (ctx) => {
    const q = parlaysRequest.user.safeParse(ctx.query);
    if (!q.success) throw badRequest(`status must be one of ${PARLAY_STATUSES.join(', ')}`);
    ctx.type = 'application/json';
    ctx.body = await svc.userParlaysBody(ctx.state.user as PlatformUser, q.data.status);
  });

  r.get('/admin/', auth, requireSuperuser, async (ctx) => {
    const q = parlaysRequest.admin.safeParse(ctx.query);
    if (!q.success) throw badRequest(zodMessage(q.error));
    const { count, results } = await svc.adminParlays(q.data);
    const link = (page: number) => {
      const u = new URL(ctx.href);
      u.searchParams.set('page', String(page));
      return u.toString();
    };
    const pages = Math.max(1, Math.ceil(count / 20));
    ctx.body = { count, next: q.data.page < pages ? link(q.data.page + 1) : null, previous: q.data.page > 1 ? link(Math.min(q.data.page - 1, pages)) : null, results };
  });

  r.post('/admin/:parlayId/void/', auth, requireSuperuser, async (ctx) => {
    const id = parlayIdParam(ctx.params.parlayId);
    const data = await svc.voidParlay(id);
    ctx.status = 202;
    ctx.body = { data };
  });

  r.get('/:parlayId/', auth, async (ctx) => {
    const id = parlayIdParam(ctx.params.parlayId);
    const body = await svc.userParlayBody(ctx.state.user as PlatformUser, id);
    if (!body) throw notFound('parlay not found');
    ctx.type = 'application/json';
    ctx.body = body;
  });

  return r;
}

const NOT_FOUND = { description: 'missing, or not the caller\'s (the same 404)', schema: api.errorBody };
const vaultData = api.dataOf(api.vault);
documentRoutes(
  { method: 'post', path: '/api/parlays/webhooks/indexer/', security: 'webhook', summary: 'Webhook delivery of raw transactions (one or an array)', body: webhookBody, responses: { 200: { description: 'counts of transactions', schema: api.webhookResult }, 400: { description: 'malformed body', schema: api.errorBody }, 503: { description: 'deferred (the provider retries) or the secret is not configured', schema: api.errorBody } } },
  { method: 'get', path: '/api/parlays/vault/', summary: 'The vault mirror', responses: { 200: { description: 'the vault', schema: vaultData } } },
  { method: 'patch', path: '/api/parlays/vault/', security: 'superuser', summary: 'Edit the vault settings', body: vaultPatch, responses: { 200: { description: 'the vault', schema: vaultData } } },
  { method: 'post', path: '/api/parlays/vault/sync/', security: 'superuser', summary: "Re-read the vault balance from the chain", responses: { 200: { description: 'the vault', schema: vaultData }, 502: { description: 'the RPC call failed', schema: api.errorBody } } },
  { method: 'get', path: '/api/parlays/user/', security: 'platform', summary: "The caller's parlays (and its linked wallet's), newest first, at most 50", query: parlaysRequest.user, responses: { 200: { description: 'parlays', schema: api.dataOf(z.array(api.parlay)) } } },
  { method: 'get', path: '/api/parlays/admin/', security: 'superuser', summary: 'Every parlay, 20 per page', query: parlaysRequest.admin, responses: { 200: { description: 'a page', schema: api.adminParlayPage } } },
  { method: 'post', path: '/api/parlays/admin/:parlayId/void/', security: 'superuser', summary: 'Void an active parlay on chain (refund)', params: parlaysRequest.params, responses: { 202: { description: 'the void_parlay transaction landed', schema: api.dataOf(api.voidResult) }, 400: { description: 'not active', schema: api.errorBody }, 404: NOT_FOUND, 502: { description: 'the RPC call failed', schema: api.errorBody } } },
  { method: 'get', path: '/api/parlays/:parlayId/', security: 'platform', summary: 'One parlay of the caller', params: parlaysRequest.params, responses: { 200: { description: 'the parlay', schema: api.dataOf(api.parlay) }, 404: NOT_FOUND } },
);

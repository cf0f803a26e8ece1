// Parlay routes (SPEC 4.1): validation and auth at the edge; the use cases live in src/parlay/.
import Router from '@koa/router';
import { z } from 'zod';
import { vaultPatch, parlaysRequest } from '../../api/parlays.ts';
import { platformAuth, requireSuperuser, webhookAuth, type PlatformUser } from '../auth.ts';
import { badRequest, notFound, zodMessage } from '../errors.ts';
import type { Edge } from '../edge.ts';
import { webhookBody } from '../../parlay/webhook-schema.ts';
import { PARLAY_STATUSES } from '../../parlay/queries.ts';
import type { ParlayService } from '../../parlay/service.ts';
import { documentRoutes } from '../openapi.ts';
import * as api from '../../api/schemas.ts';

const parlayIdParam = (raw: string) => {
  if (!parlaysRequest.params.safeParse({ parlayId: raw }).success) throw notFound('parlay not found');
  return raw;
};

export { vaultPatch, parlaysRequest };

export function parlayRoutes(svc: ParlayService, opts: { jwtSecret: string; webhookSecret?: string; edge: Edge }) {
  const r = new Router({ prefix: '/api/parlays' });
  const auth = platformAuth(opts.jwtSecret, (u) => svc.rememberUser(u));
  const hookAuth = webhookAuth(opts.webhookSecret);
  const { body: readBody, webhookBody } = opts.edge;

  // The webhook's secret is checked before its body is read (503 unset, 403 wrong, whatever the
  // body), which then has a bound of its own (WEBHOOK_BODY_LIMIT_BYTES).
  r.post('/webhooks/indexer/', hookAuth, webhookBody, async (ctx) => {
    // The body is the service's from here: not kept on the context while the delivery commits.
    // (deliver validates and decodes before it returns its promise).
    const delivered = svc.deliver(ctx.request.body);
    ctx.request.body = undefined;
    ctx.request.rawBody = undefined;
    ctx.body = await delivered;
  });

  r.get('/vault/', async (ctx) => {
    ctx.body = { data: await svc.vault() };
  });
  r.patch('/vault/', auth, requireSuperuser, readBody, async (ctx) => {
    const body = vaultPatch.parse(ctx.request.body ?? {});
    ctx.body = { data: await svc.patchVault(body) };
  });
  r.post('/vault/sync/', auth, requireSuperuser, async (ctx) => {
    ctx.body = { data: await svc.syncVault() };
  });

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
    // ctx.href from the Host (or, behind a trusted proxy, X-Forwarded-Host) that src/http/app.ts
    // checked; should it still not parse, the link is relative rather than a 500.
    const link = (page: number) => {
      let u: URL;
      try {
        u = new URL(ctx.href);
      } catch {
        u = new URL(ctx.originalUrl, 'http://invalid.host');
      }
      u.searchParams.set('page', String(page));
      return u.host === 'invalid.host' ? `${u.pathname}${u.search}` : u.toString();
    };
    const pages = Math.max(1, Math.ceil(count / 20));
    ctx.body = {
      count,
      next: q.data.page < pages ? link(q.data.page + 1) : null,
      previous: q.data.page > 1 ? link(Math.min(q.data.page - 1, pages)) : null,
      results,
    };
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

const NOT_FOUND = { description: "missing, or not the caller's (the same 404)", schema: api.errorBody };
const vaultData = api.dataOf(api.vault);
documentRoutes(
  {
    method: 'post',
    path: '/api/parlays/webhooks/indexer/',
    security: 'webhook',
    summary: 'Webhook delivery of raw transactions (one or an array)',
    body: webhookBody,
    responses: {
      200: { description: 'counts of transactions', schema: api.webhookResult },
      400: { description: 'malformed body (from a caller with the secret)', schema: api.errorBody },
      403: { description: 'wrong secret (checked before the body is read)', schema: api.errorBody },
      503: { description: 'deferred (the provider retries) or the secret is not configured (whatever the body)', schema: api.errorBody },
    },
  },
  {
    method: 'get',
    path: '/api/parlays/vault/',
    summary: 'The vault mirror',
    responses: { 200: { description: 'the vault', schema: vaultData } },
  },
  {
    method: 'patch',
    path: '/api/parlays/vault/',
    security: 'superuser',
    summary: 'Edit the vault settings',
    body: vaultPatch,
    responses: { 200: { description: 'the vault', schema: vaultData } },
  },
  {
    method: 'post',
    path: '/api/parlays/vault/sync/',
    security: 'superuser',
    summary: 'Re-read the vault balance from the chain',
    responses: { 200: { description: 'the vault', schema: vaultData }, 502: { description: 'the RPC call failed', schema: api.errorBody } },
  },
  {
    method: 'get',
    path: '/api/parlays/user/',
    security: 'platform',
    summary: "The caller's parlays (and its linked wallet's), newest first, at most 50",
    query: parlaysRequest.user,
    responses: { 200: { description: 'parlays', schema: api.dataOf(z.array(api.parlay)) } },
  },
  {
    method: 'get',
    path: '/api/parlays/admin/',
    security: 'superuser',
    summary: 'Every parlay, 20 per page',
    query: parlaysRequest.admin,
    responses: { 200: { description: 'a page', schema: api.adminParlayPage } },
  },
  {
    method: 'post',
    path: '/api/parlays/admin/:parlayId/void/',
    security: 'superuser',
    summary: 'Void an active parlay on chain (refund)',
    params: parlaysRequest.params,
    responses: {
      202: { description: 'the void_parlay transaction landed', schema: api.dataOf(api.voidResult) },
      400: { description: 'not active', schema: api.errorBody },
      404: NOT_FOUND,
      502: { description: 'the RPC call failed', schema: api.errorBody },
      503: { description: 'no chain RPC, or no authority key (PARLAY_AUTHORITY_KEYPAIR) to sign with', schema: api.errorBody },
    },
  },
  {
    method: 'get',
    path: '/api/parlays/:parlayId/',
    security: 'platform',
    summary: 'One parlay of the caller',
    params: parlaysRequest.params,
    responses: { 200: { description: 'the parlay', schema: api.dataOf(api.parlay) }, 404: NOT_FOUND },
  },
);

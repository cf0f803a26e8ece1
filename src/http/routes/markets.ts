// The market catalog: superuser edits under /api/markets/admin/markets/, public reads.
import Router from '@koa/router';
import { platformAuth, requireSuperuser } from '../auth.ts';
import { HttpError, notFound } from '../errors.ts';
import { CatalogConflict, marketCreate, marketPatch, type Catalog } from '../../clob/catalog.ts';
import { z } from 'zod';
import { documentRoutes, validate } from '../openapi.ts';
import * as api from '../../api/schemas.ts';
import type { Edge } from '../edge.ts';

export const marketsRequest = {
  list: z.object({ status: z.enum(['open', 'closed', 'resolved']).optional() }),
  params: z.object({ conditionId: z.string().min(1).max(128).meta({ description: 'condition id: 0x + 64 hex digits' }) }),
};

export function marketRoutes(catalog: Catalog, o: { jwtSecret: string; edge: Edge; onChange?: (conditionId: string) => Promise<void> }) {
  const r = new Router({ prefix: '/api/markets' });
  const auth = platformAuth(o.jwtSecret);
  const readBody = o.edge.body;

  r.get('/', async (ctx) => {
    const q = marketsRequest.list.safeParse(ctx.query);
    if (!q.success) throw new HttpError(400, 'invalid_request', 'status must be open, closed or resolved');
    ctx.body = { data: await catalog.list(q.data) };
  });
  r.get('/admin/markets/', auth, requireSuperuser, async (ctx) => {
    ctx.body = { data: await catalog.list() };
  });
  r.post('/admin/markets/', auth, requireSuperuser, readBody, async (ctx) => {
    const body = marketCreate.parse(ctx.request.body ?? {});
    const created = await catalog.create(body);
    if (!created) throw new HttpError(409, 'already_exists', `market ${body.condition_id} exists (or its on_chain_market_id is taken)`);
    await o.onChange?.(body.condition_id);
    ctx.status = 201;
    ctx.body = { data: created };
  });
  r.get('/admin/markets/:conditionId/', auth, requireSuperuser, async (ctx) => {
    const m = await catalog.get(validate(marketsRequest.params, ctx.params).conditionId);
    if (!m) throw notFound('market not found');
    ctx.body = { data: m };
  });
  r.patch('/admin/markets/:conditionId/', auth, requireSuperuser, readBody, async (ctx) => {
    const body = marketPatch.parse(ctx.request.body ?? {});
    let m;
    try {
      m = await catalog.patch(validate(marketsRequest.params, ctx.params).conditionId, body);
    } catch (e) {
      if (e instanceof CatalogConflict) throw new HttpError(409, 'conflict', e.message);
      throw e;
    }
    if (!m) throw notFound('market not found');
    await o.onChange?.(ctx.params.conditionId.toLowerCase());
    ctx.body = { data: m };
  });
  return r;
}

const list = z.strictObject({ data: z.array(api.market) });
const one = z.strictObject({ data: api.market });
const NOT_FOUND = { description: 'not found', schema: api.errorBody };
documentRoutes(
  {
    method: 'get',
    path: '/api/markets/',
    summary: 'The market catalog',
    query: marketsRequest.list,
    responses: { 200: { description: 'markets, newest first', schema: list } },
  },
  {
    method: 'get',
    path: '/api/markets/admin/markets/',
    security: 'superuser',
    summary: 'The market catalog (admin)',
    responses: { 200: { description: 'markets', schema: list } },
  },
  {
    method: 'post',
    path: '/api/markets/admin/markets/',
    security: 'superuser',
    summary: 'Create a market',
    body: marketCreate,
    responses: { 201: { description: 'created', schema: one }, 409: { description: 'exists', schema: api.errorBody } },
  },
  {
    method: 'get',
    path: '/api/markets/admin/markets/:conditionId/',
    security: 'superuser',
    summary: 'One market (admin)',
    params: marketsRequest.params,
    responses: { 200: { description: 'the market', schema: one }, 404: NOT_FOUND },
  },
  {
    method: 'patch',
    path: '/api/markets/admin/markets/:conditionId/',
    security: 'superuser',
    summary: 'Edit a market',
    params: marketsRequest.params,
    body: marketPatch,
    responses: {
      200: { description: 'the market', schema: one },
      404: NOT_FOUND,
      409: { description: 'on_chain_market_id taken', schema: api.errorBody },
    },
  },
);

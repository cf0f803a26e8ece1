// Parlay templates (SPEC 4.1): superuser admin routes, the public suggestions (ETag, 304) and the
// quote helper that refuses demo legs. Payloads: src/templates/schemas.ts and src/templates/README.md.
import Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { platformAuth, requireSuperuser } from '../auth.ts';
import { notFound } from '../errors.ts';
import { documentRoutes, errorBody, validate as parse } from '../openapi.ts';
import {
  quoteRequest,
  quoteResponse,
  refreshAllResponse,
  suggestionsResponse,
  templateCreate,
  templateListResponse,
  templatePatch,
  templatePk,
  templateResponse,
} from '../../templates/schemas.ts';
import type { TemplateService } from '../../templates/service.ts';
import type { Edge } from '../edge.ts';

const pk = (ctx: Context) => {
  const r = templatePk.safeParse(ctx.params.pk);
  if (!r.success) throw notFound('template not found');
  return r.data;
};

/** True when an If-None-Match header names the current ETag (weak comparison, `*` included). */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (t: string) => t.trim().replace(/^W\//, '');
  return header.split(',').some((t) => t.trim() === '*' || bare(t) === bare(etag));
}

export function templateRoutes(svc: TemplateService, o: { jwtSecret: string; edge: Edge }) {
  const r = new Router({ prefix: '/api/markets' });
  const admin = [platformAuth(o.jwtSecret), requireSuperuser] as const;
  const readBody = o.edge.body;
  const base = '/admin/parlay-templates';

  r.get(`${base}/`, ...admin, async (ctx) => {
    ctx.body = { data: await svc.list() };
  });
  r.post(`${base}/`, ...admin, readBody, async (ctx) => {
    const body = parse(templateCreate, ctx.request.body ?? {});
    ctx.status = 201;
    ctx.body = { data: await svc.create(body) };
  });
  r.post(`${base}/refresh-all/`, ...admin, async (ctx) => {
    ctx.body = await svc.refreshAll();
  });
  r.get(`${base}/:pk/`, ...admin, async (ctx) => {
    const t = await svc.get(pk(ctx));
    if (!t) throw notFound('template not found');
    ctx.body = { data: t };
  });
  r.patch(`${base}/:pk/`, ...admin, readBody, async (ctx) => {
    const id = pk(ctx);
    const t = await svc.patch(id, parse(templatePatch, ctx.request.body ?? {}));
    if (!t) throw notFound('template not found');
    ctx.body = { data: t };
  });
  r.delete(`${base}/:pk/`, ...admin, async (ctx) => {
    if (!(await svc.delete(pk(ctx)))) throw notFound('template not found');
    ctx.status = 204;
  });
  r.post(`${base}/:pk/refresh/`, ...admin, async (ctx) => {
    const t = await svc.refresh(pk(ctx));
    if (!t) throw notFound('template not found');
    ctx.body = { data: t };
  });

  r.get('/parlay-suggestions/', async (ctx) => {
    const { etag, body } = await svc.suggestions();
    ctx.set('ETag', etag);
    ctx.set('Cache-Control', 'public, max-age=5');
    if (etagMatches(ctx.get('if-none-match'), etag)) {
      ctx.status = 304;
      return;
    }
    ctx.type = 'application/json';
    ctx.body = body;
  });

  r.post('/parlay-quote/', readBody, async (ctx) => {
    ctx.body = { data: await svc.quote(parse(quoteRequest, ctx.request.body ?? {})) };
  });
  return r;
}

const BASE = '/api/markets/admin/parlay-templates';
const params = z.object({ pk: templatePk.meta({ description: 'the template id' }) });
const NOT_FOUND = { description: 'no such template', schema: errorBody };
const tags = ['parlay templates'];
documentRoutes(
  {
    method: 'get',
    path: `${BASE}/`,
    security: 'superuser',
    tags,
    summary: 'Every parlay template, in display order',
    responses: { 200: { description: 'templates', schema: templateListResponse } },
  },
  {
    method: 'post',
    path: `${BASE}/`,
    security: 'superuser',
    tags,
    summary: 'Create a template (priced at once)',
    body: templateCreate,
    description:
      'Two or more legs, each a catalog market and outcome, or a demo leg (negative market_id, a question and a probability; never submittable). ' +
      'No market twice, at most the mirrored config max_legs. 400 codes: invalid_request, unknown_market, too_many_legs.',
    responses: { 201: { description: 'created and refreshed', schema: templateResponse } },
  },
  {
    method: 'post',
    path: `${BASE}/refresh-all/`,
    security: 'superuser',
    tags,
    summary: 'Refresh every template from the order book',
    responses: { 200: { description: 'counts and the templates', schema: refreshAllResponse } },
  },
  {
    method: 'get',
    path: `${BASE}/:pk/`,
    security: 'superuser',
    tags,
    summary: 'One template',
    params,
    responses: { 200: { description: 'the template', schema: templateResponse }, 404: NOT_FOUND },
  },
  {
    method: 'patch',
    path: `${BASE}/:pk/`,
    security: 'superuser',
    tags,
    summary: 'Edit a template (new legs are priced at once)',
    params,
    body: templatePatch,
    responses: { 200: { description: 'the template', schema: templateResponse }, 404: NOT_FOUND },
  },
  {
    method: 'delete',
    path: `${BASE}/:pk/`,
    security: 'superuser',
    tags,
    summary: 'Delete a template',
    params,
    responses: { 204: { description: 'deleted' }, 404: NOT_FOUND },
  },
  {
    method: 'post',
    path: `${BASE}/:pk/refresh/`,
    security: 'superuser',
    tags,
    summary: 'Refresh one template from the order book',
    params,
    description:
      "Each leg's probability: midpoint of the selected outcome's best bid and ask (mint/merge view), else the last trade price, else the catalog reference price. " +
      'Combined = product (12 places); payout per unit stake with the mirrored house edge. Stale when a leg market started, closed, resolved or has no price.',
    responses: { 200: { description: 'the template', schema: templateResponse }, 404: NOT_FOUND },
  },
  {
    method: 'get',
    path: '/api/markets/parlay-suggestions/',
    tags,
    summary: 'Suggested parlays: active, fresh templates in display order',
    description: 'Served from a read model with an ETag; send If-None-Match to get 304 when nothing changed.',
    headers: z.object({ 'if-none-match': z.string().optional().meta({ description: 'an ETag of an earlier answer' }) }),
    responses: { 200: { description: 'suggestions (header ETag)', schema: suggestionsResponse }, 304: { description: 'not modified' } },
  },
  {
    method: 'post',
    path: '/api/markets/parlay-quote/',
    tags,
    summary: 'Price legs (or a template) for a stake as create_parlay would now',
    description:
      'Refuses demo legs (400 demo_leg), unknown (unknown_market), started/closed/resolved (market_unavailable) or off-chain (not_on_chain) markets, ' +
      'legs without a price (no_price), duplicate markets, too many legs, a stake outside the config limits (stake_out_of_range) and payouts over the cap (payout_cap_exceeded).',
    body: quoteRequest,
    responses: {
      200: { description: 'the quote', schema: quoteResponse },
      404: { description: 'no such template', schema: errorBody },
      503: { description: 'the program config is not mirrored yet', schema: errorBody },
    },
  },
);

// The market catalog: superuser edits under /api/markets/admin/markets/, public reads.
import Router from '@koa/router';
import { platformAuth, requireSuperuser } from '../auth.ts';
import { HttpError, notFound } from '../errors.ts';
import { CatalogConflict, marketCreate, marketPatch, type Catalog } from '../../clob/catalog.ts';
import { z } from 'zod';

export function marketRoutes(catalog: Catalog, o: { jwtSecret: string; onChange?: (conditionId: string) => Promise<void> }) {
  const r = new Router({ prefix: '/api/markets' });
  const auth = platformAuth(o.jwtSecret);
  const status = z.object({ status: z.enum(['open', 'closed', 'resolved']).optional() });

  r.get('/', async (ctx) => {
    const q = status.safeParse(ctx.query);
    if (!q.success) throw new HttpError(400, 'invalid_request', 'status must be open, closed or resolved');
    ctx.body = { data: await catalog.list(q.data) };
  });
  r.get('/admin/markets/', auth, requireSuperuser, async (ctx) => { ctx.body = { data: await catalog.list() }; });
  r.post('/admin/markets/', auth, requireSuperuser, async (ctx) => {
    const body = marketCreate.parse(ctx.request.body ?? {});
    const created = await catalog.create(body);
    if (!created) throw new HttpError(409, 'already_exists', `market ${body.condition_id} exists (or its on_chain_market_id is taken)`);
    await o.onChange?.(body.condition_id);
    ctx.status = 201;
    ctx.body = { data: created };
  });
  r.get('/admin/markets/:conditionId/', auth, requireSuperuser, async (ctx) => {
    const m = await catalog.get(ctx.params.conditionId);
    if (!m) throw notFound('market not found');
    ctx.body = { data: m };
  });
  r.patch('/admin/markets/:conditionId/', auth, requireSuperuser, async (ctx) => {
    const body = marketPatch.parse(ctx.request.body ?? {});
    let m;
    try {
      m = await catalog.patch(ctx.params.conditionId, body);
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

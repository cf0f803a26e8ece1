// Order-book routes (SPEC 4.2, contracts/clob.md): bearer-authenticated except the public market
// read; validation here, use cases in src/clob/.
import Router from '@koa/router';
import { timingSafeEqual, createHash } from 'node:crypto';
import { z } from 'zod';
import type { Context, Next } from 'koa';
import { HttpError, notFound, zodMessage } from '../errors.ts';
import { clobAuth } from './clob-auth.ts';
import { placeOrderBody } from '../../clob/signed-order.ts';
import { OrderRejected, type ClobService } from '../../clob/service.ts';
import * as ledger from '../../clob/ledger-queries.ts';
import { cursorId, endCursor, parseCursor, readAfter } from '../../clob/ledger-stream.ts';
import { PassThrough } from 'node:stream';
import type { ClobTokens } from '../../clob/sign-in.ts';
import type { Catalog } from '../../clob/catalog.ts';

type Db = { execute(sql: string, params?: unknown[]): Promise<any[]> };

const orderIdSchema = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'an order id is 0x + 64 hex digits').transform((s) => s.toLowerCase());
const conditionId = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a market is a condition id: 0x + 64 hex digits').transform((s) => s.toLowerCase());
const unixSeconds = z.coerce.number().int().nonnegative();

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(400, 'invalid_request', zodMessage(r.error));
  return r.data;
}

function internalToken(secret: string) {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return async (ctx: Context, next: Next) => {
    if (!timingSafeEqual(digest(ctx.get('x-internal-token')), digest(secret))) throw new HttpError(403, 'forbidden', 'X-Internal-Token missing or wrong');
    await next();
  };
}

export function clobRoutes(o: { svc: ClobService; tokens: ClobTokens; db: () => Db; catalog: Catalog; internalToken: string; bookTopic: string; asker: import('../../runtime/asker.ts').Asker }) {
  const r = new Router({ prefix: '/v1' });
  const auth = clobAuth(o.tokens);
  const wallet = (ctx: Context) => ctx.state.wallet as string;

  r.get('/markets/:conditionId', async (ctx) => {
    const id = parse(conditionId, ctx.params.conditionId);
    const m = await o.catalog.get(id);
    if (!m) throw notFound('market not found');
    const quote = await o.svc.quote(id).catch(() => null);
    const fmt = (q: any) => (q ? { price: (q.price / 1e6).toString(), size: (Number(q.size) / 1e6).toString() } : null);
    ctx.body = {
      ...m,
      best_bid: fmt(quote?.yes?.bid), best_ask: fmt(quote?.yes?.ask),
      last_price: quote?.last ? (quote.last.price / 1e6).toString() : null,
    };
  });

  r.post('/order', auth, async (ctx) => {
    const body = placeOrderBody.safeParse(ctx.request.body);
    if (!body.success) {
      ctx.status = 400;
      ctx.body = { success: false, errorMsg: zodMessage(body.error), code: 'INVALID_ORDER' };
      return;
    }
    try {
      ctx.body = await o.svc.placeOrder(wallet(ctx), body.data.order, body.data.orderType);
    } catch (e) {
      if (!(e instanceof OrderRejected)) throw e;
      ctx.status = 400;
      ctx.body = { success: false, errorMsg: e.message, code: e.code };
    }
  });

  r.post('/orders/cancel', auth, async (ctx) => {
    const { orderID } = parse(z.object({ orderID: z.string().min(1) }), ctx.request.body ?? {});
    ctx.body = await o.svc.cancel(wallet(ctx), { ids: [orderID.toLowerCase()] });
  });
  r.post('/orders/cancel-batch', auth, async (ctx) => {
    const { orderIDs } = parse(z.object({ orderIDs: z.array(z.string().min(1)).max(1000) }), ctx.request.body ?? {});
    ctx.body = await o.svc.cancel(wallet(ctx), { ids: orderIDs.map((s) => s.toLowerCase()) });
  });
  r.post('/orders/cancel-all', auth, async (ctx) => {
    ctx.body = await o.svc.cancel(wallet(ctx), { all: true });
  });
  r.post('/orders/cancel-market', auth, async (ctx) => {
    const b = parse(z.object({ market: conditionId, asset_id: z.string().min(1).optional() }), ctx.request.body ?? {});
    ctx.body = await o.svc.cancel(wallet(ctx), { market: b.market, assetId: b.asset_id });
  });

  r.post('/orders/size-update', internalToken(o.internalToken), async (ctx) => {
    const b = parse(z.object({ trade_id: z.string().min(1), orders: z.array(orderIdSchema).max(1000), reason: z.string().max(200).default('settlement failed') }), ctx.request.body ?? {});
    const rows = b.orders.length ? await o.db().execute('select id, market from open_orders where id in (?)', [b.orders]) : [];
    const byMarket = new Map<string, string[]>();
    for (const row of rows) byMarket.set(row.market, [...(byMarket.get(row.market) ?? []), row.id]);
    const known = new Set(rows.map((x: any) => x.id));
    const invalidated: string[] = [];
    const notFound = b.orders.filter((id) => !known.has(id));
    for (const [market, ids] of byMarket) {
      const rep = await o.asker.ask<any>({ topic: o.bookTopic, key: market, cmd: { type: 'InvalidateOrders', orderIds: ids, reason: b.reason, tradeId: b.trade_id, now: Date.now() }, id: `size-update:${b.trade_id}:${market}` });
      invalidated.push(...(rep?.invalidated ?? []));
      notFound.push(...(rep?.not_found ?? []));
    }
    ctx.body = { invalidated, not_found: notFound };
  });

  r.get('/orders', auth, async (ctx) => {
    const q = parse(z.object({ market: conditionId.optional() }), ctx.query);
    ctx.body = await o.svc.bookOrders(wallet(ctx), { market: q.market });
  });
  r.get('/orders/value-range', auth, async (ctx) => {
    const q = parse(z.object({ min_value: z.coerce.number().nonnegative() }), ctx.query);
    const orders = await o.svc.bookOrders(wallet(ctx), {});
    ctx.body = orders.filter((x: any) => Number(x.price) * Number(x.remainingSize) >= q.min_value);
  });
  r.get('/orders/:id', auth, async (ctx) => {
    const id = parse(orderIdSchema, ctx.params.id);
    const [found] = await o.svc.bookOrders(wallet(ctx), { orderId: id });
    if (!found) throw notFound('order not on the book');
    ctx.body = found;
  });

  r.get('/open-orders', auth, async (ctx) => {
    const q = parse(z.object({ market: conditionId.optional() }), ctx.query);
    ctx.body = await ledger.openOrders(o.db(), wallet(ctx), { market: q.market });
  });
  r.get('/open-orders/:id', auth, async (ctx) => {
    const id = parse(orderIdSchema, ctx.params.id);
    const [found] = await ledger.openOrders(o.db(), wallet(ctx), { id });
    if (!found) throw notFound('order not found');
    ctx.body = found;
  });

  r.get('/trades', auth, async (ctx) => {
    const q = parse(z.object({
      id: z.string().optional(), owner: z.string().optional(), taker: z.string().optional(), maker: z.string().optional(),
      market: conditionId.optional(), asset_id: z.string().optional(), limit: z.coerce.number().int().min(1).max(500).default(100),
      before: unixSeconds.optional(), after: unixSeconds.optional(),
    }), ctx.query);
    ctx.body = await ledger.trades(o.db(), wallet(ctx), q);
  });
  r.get('/trades/last', auth, async (ctx) => {
    const q = parse(z.object({ market: conditionId }), ctx.query);
    const t = await ledger.lastTrade(o.db(), q.market);
    if (!t) throw notFound('no trade in this market yet');
    ctx.body = t;
  });

  r.get('/stream', auth, async (ctx) => {
    const q = parse(z.object({ market: conditionId, from: z.enum(['beginning', 'now']).default('now'), last_event_id: z.string().optional() }), ctx.query);
    const resume = ctx.get('last-event-id') || q.last_event_id;
    let cursor = parseCursor(resume);
    if (resume && !cursor) throw new HttpError(400, 'invalid_request', 'Last-Event-ID must look like o<seq>.t<seq>');
    cursor ??= q.from === 'beginning' ? { orders: 0, trades: 0 } : await endCursor(o.db(), q.market);
    const out = new PassThrough();
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
    ctx.set({ 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    ctx.type = 'text/event-stream';
    ctx.status = 200;
    ctx.body = out;
    let open = true;
    ctx.req.on('close', () => { open = false; });
    out.write(`: stream of ${q.market} from ${cursorId(cursor)}\n\n`);
    const me = wallet(ctx);
    void (async () => {
      let quiet = 0;
      while (open) {
        try {
          const { rows, ids, cursor: next } = await readAfter(o.db(), q.market, cursor!, me);
          rows.forEach((m, i) => out.write(`id: ${ids[i]}\nevent: ${String(m.type)}\ndata: ${JSON.stringify(m)}\n\n`));
          cursor = next;
          if (rows.length) { quiet = 0; continue; }
        } catch { /* the database is away for a moment: the cursor stays, the client keeps its place */ }
        if (++quiet % 60 === 0) out.write(': keep-alive\n\n');
        await new Promise((res) => setTimeout(res, 250));
      }
      out.end();
    })();
  });

  return r;
}

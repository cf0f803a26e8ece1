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
import type { Edge } from '../edge.ts';
import { documentRoutes } from '../openapi.ts';
import * as api from '../../api/schemas.ts';
import { clobRequest } from '../../api/clob.ts';

import type { Db } from '../../db.ts';

export { clobRequest };

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(400, 'invalid_request', zodMessage(r.error));
  return r.data;
}

function internalToken(secret: string) {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return async (ctx: Context, next: Next) => {
    if (!timingSafeEqual(digest(ctx.get('x-internal-token')), digest(secret)))
      throw new HttpError(403, 'forbidden', 'X-Internal-Token missing or wrong');
    await next();
  };
}

export function clobRoutes(o: { svc: ClobService; tokens: ClobTokens; db: () => Db; internalToken: string; edge: Edge }) {
  const r = new Router({ prefix: '/v1' });
  // The bearer check (and the wallet's rate limit) before the body is read.
  const auth = clobAuth(o.tokens, o.edge);
  const readBody = o.edge.body;
  const wallet = (ctx: Context) => ctx.state.wallet as string;

  r.get('/markets/:conditionId', async (ctx) => {
    const m = await o.svc.marketView(parse(clobRequest.marketParams, ctx.params).conditionId);
    if (!m) throw notFound('market not found');
    ctx.body = m;
  });

  r.post('/order', auth, readBody, async (ctx) => {
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

  r.post('/orders/cancel', auth, readBody, async (ctx) => {
    const { orderID } = parse(clobRequest.cancel, ctx.request.body ?? {});
    ctx.body = await o.svc.cancel(wallet(ctx), { ids: [orderID.toLowerCase()] });
  });
  r.post('/orders/cancel-batch', auth, readBody, async (ctx) => {
    const { orderIDs } = parse(clobRequest.cancelBatch, ctx.request.body ?? {});
    ctx.body = await o.svc.cancel(wallet(ctx), { ids: orderIDs.map((s) => s.toLowerCase()) });
  });
  r.post('/orders/cancel-all', auth, async (ctx) => {
    ctx.body = await o.svc.cancel(wallet(ctx), { all: true });
  });
  r.post('/orders/cancel-market', auth, readBody, async (ctx) => {
    const b = parse(clobRequest.cancelMarket, ctx.request.body ?? {});
    ctx.body = await o.svc.cancel(wallet(ctx), { market: b.market, assetId: b.asset_id });
  });

  r.post('/orders/size-update', internalToken(o.internalToken), readBody, async (ctx) => {
    ctx.body = await o.svc.sizeUpdate(parse(clobRequest.sizeUpdate, ctx.request.body ?? {}));
  });

  r.get('/orders', auth, async (ctx) => {
    const q = parse(clobRequest.marketQuery, ctx.query);
    ctx.body = await o.svc.bookOrders(wallet(ctx), { market: q.market });
  });
  r.get('/orders/value-range', auth, async (ctx) => {
    ctx.body = await o.svc.ordersValueRange(wallet(ctx), parse(clobRequest.valueRange, ctx.query).min_value);
  });
  r.get('/orders/:id', auth, async (ctx) => {
    const id = parse(clobRequest.orderParams, ctx.params).id;
    const [found] = await o.svc.bookOrders(wallet(ctx), { orderId: id });
    if (!found) throw notFound('order not on the book');
    ctx.body = found;
  });

  r.get('/open-orders', auth, async (ctx) => {
    const q = parse(clobRequest.marketQuery, ctx.query);
    ctx.body = await ledger.openOrders(o.db(), wallet(ctx), { market: q.market });
  });
  r.get('/open-orders/:id', auth, async (ctx) => {
    const id = parse(clobRequest.orderParams, ctx.params).id;
    const [found] = await ledger.openOrders(o.db(), wallet(ctx), { id });
    if (!found) throw notFound('order not found');
    ctx.body = found;
  });

  r.get('/trades', auth, async (ctx) => {
    const q = parse(clobRequest.trades, ctx.query);
    ctx.body = await ledger.trades(o.db(), wallet(ctx), q);
  });
  r.get('/trades/last', auth, async (ctx) => {
    const q = parse(clobRequest.lastTrade, ctx.query);
    const t = await ledger.lastTrade(o.db(), q.market);
    if (!t) throw notFound('no trade in this market yet');
    ctx.body = t;
  });

  r.get('/stream', auth, async (ctx) => {
    const q = parse(clobRequest.stream, ctx.query);
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
    ctx.req.on('close', () => {
      open = false;
    });
    out.write(`: stream of ${q.market} from ${cursorId(cursor)}\n\n`);
    const me = wallet(ctx);
    void (async () => {
      let quiet = 0;
      while (open) {
        try {
          const { rows, ids, cursor: next } = await readAfter(o.db(), q.market, cursor!, me);
          rows.forEach((m, i) => out.write(`id: ${ids[i]}\nevent: ${String(m.type)}\ndata: ${JSON.stringify(m)}\n\n`));
          cursor = next;
          if (rows.length) {
            quiet = 0;
            continue;
          }
        } catch {
          /* the database is away for a moment: the cursor stays, the client keeps its place */
        }
        if (++quiet % 60 === 0) out.write(': keep-alive\n\n');
        await new Promise((res) => setTimeout(res, 250));
      }
      out.end();
    })();
  });

  return r;
}

const NOT_FOUND = { description: 'not found', schema: api.errorBody };
documentRoutes(
  {
    method: 'get',
    path: '/v1/markets/:conditionId',
    summary: 'A market with its best bid, best ask and last price',
    params: clobRequest.marketParams,
    responses: { 200: { description: 'the market', schema: api.bookMarket }, 404: NOT_FOUND },
  },
  {
    method: 'post',
    path: '/v1/order',
    security: 'clob',
    summary: 'Post a signed order (contracts/clob.md, Inserting)',
    body: placeOrderBody,
    responses: {
      200: { description: 'accepted', schema: api.placeResult },
      400: { description: 'rejected', schema: api.placeRejection },
      503: {
        description:
          "the wallet's balance is not on record and the chain cannot be read (balance_unavailable), or no chain RPC or collateral mint is configured",
        schema: api.errorBody,
      },
    },
  },
  {
    method: 'post',
    path: '/v1/orders/cancel',
    security: 'clob',
    summary: 'Cancel one order',
    body: clobRequest.cancel,
    responses: { 200: { description: 'the cancel result', schema: api.cancelResult } },
  },
  {
    method: 'post',
    path: '/v1/orders/cancel-batch',
    security: 'clob',
    summary: 'Cancel several orders (not atomic: read canceled and not_canceled)',
    body: clobRequest.cancelBatch,
    responses: { 200: { description: 'the cancel result', schema: api.cancelResult } },
  },
  {
    method: 'post',
    path: '/v1/orders/cancel-all',
    security: 'clob',
    summary: 'Cancel every order of the caller',
    responses: { 200: { description: 'the cancel result', schema: api.cancelResult } },
  },
  {
    method: 'post',
    path: '/v1/orders/cancel-market',
    security: 'clob',
    summary: "Cancel the caller's orders in a market (and asset)",
    body: clobRequest.cancelMarket,
    responses: { 200: { description: 'the cancel result', schema: api.cancelResult } },
  },
  {
    method: 'post',
    path: '/v1/orders/size-update',
    security: 'internal',
    summary: 'Invalidate resting orders of a failed settlement (executor only)',
    headers: clobRequest.internalHeaders,
    body: clobRequest.sizeUpdate,
    responses: { 200: { description: 'what was invalidated', schema: api.sizeUpdateResult } },
  },
  {
    method: 'get',
    path: '/v1/orders',
    security: 'clob',
    summary: "The caller's orders on the book",
    query: clobRequest.marketQuery,
    responses: { 200: { description: 'book-form orders', schema: z.array(api.bookOrder) } },
  },
  {
    method: 'get',
    path: '/v1/orders/value-range',
    security: 'clob',
    summary: "The caller's book orders whose price × remaining size reaches min_value",
    query: clobRequest.valueRange,
    responses: { 200: { description: 'book-form orders', schema: z.array(api.bookOrder) } },
  },
  {
    method: 'get',
    path: '/v1/orders/:id',
    security: 'clob',
    summary: "One of the caller's orders on the book (a fully matched order is not found)",
    params: clobRequest.orderParams,
    responses: { 200: { description: 'the order', schema: api.bookOrder }, 404: NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/open-orders',
    security: 'clob',
    summary: "The caller's orders from the ledger (finished ones too)",
    query: clobRequest.marketQuery,
    responses: { 200: { description: 'OpenOrder entries', schema: z.array(api.openOrder) } },
  },
  {
    method: 'get',
    path: '/v1/open-orders/:id',
    security: 'clob',
    summary: 'One OpenOrder of the caller',
    params: clobRequest.orderParams,
    responses: { 200: { description: 'the order', schema: api.openOrder }, 404: NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/trades',
    security: 'clob',
    summary: "The caller's trades (TradeParams); reconcile by maker_orders",
    query: clobRequest.trades,
    responses: { 200: { description: 'TradeSummary entries, newest first', schema: z.array(api.tradeSummary) } },
  },
  {
    method: 'get',
    path: '/v1/trades/last',
    security: 'clob',
    summary: 'The last trade of a market',
    query: clobRequest.lastTrade,
    responses: { 200: { description: 'the last trade', schema: api.lastTrade }, 404: NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/stream',
    security: 'clob',
    summary: "A market's ledger as Server-Sent Events, resumable with Last-Event-ID",
    query: clobRequest.stream,
    headers: clobRequest.streamHeaders,
    responses: { 200: { description: 'the event stream', schema: api.sseStream, contentType: 'text/event-stream' } },
  },
);

// Public market data under /v1 (no auth; the per-IP limit of every /v1 route applies): the book,
// best prices, midpoint, spread, tick size and price history of outcome tokens, in the shapes of
// the Polymarket CLOB API. Parse, call src/clob/market-data.ts, answer.
import Router from '@koa/router';
import { z } from 'zod';
import { MAX_BATCH, marketDataRequest, marketDataResponse } from '../../api/market-data.ts';
import { MAX_HISTORY_POINTS, type MarketData } from '../../clob/market-data.ts';
import { MAX_MARKET_TRADES } from '../../clob/market-trades.ts';
import type { Edge } from '../edge.ts';
import { documentRoutes, validate } from '../openapi.ts';
import { errorBody } from '../../api/schemas.ts';

export { MAX_BATCH, marketDataRequest, marketDataResponse };

export function marketDataRoutes(o: { data: MarketData; edge: Edge }) {
  const r = new Router({ prefix: '/v1' });
  const readBody = o.edge.body;
  const d = o.data;

  r.get('/book', async (ctx) => {
    ctx.body = await d.book(validate(marketDataRequest.token, ctx.query).token_id);
  });
  r.post('/books', readBody, async (ctx) => {
    ctx.body = await d.books(validate(marketDataRequest.tokens, ctx.request.body).map((x) => x.token_id));
  });
  r.get('/price', async (ctx) => {
    const q = validate(marketDataRequest.price, ctx.query);
    ctx.body = { price: (await d.prices([q]))[q.token_id][q.side] ?? null };
  });
  r.post('/prices', readBody, async (ctx) => {
    ctx.body = await d.prices(validate(marketDataRequest.prices, ctx.request.body));
  });
  r.get('/midpoint', async (ctx) => {
    const { token_id } = validate(marketDataRequest.token, ctx.query);
    ctx.body = { mid: (await d.midpoints([token_id]))[token_id] };
  });
  r.post('/midpoints', readBody, async (ctx) => {
    ctx.body = await d.midpoints(validate(marketDataRequest.tokens, ctx.request.body).map((x) => x.token_id));
  });
  r.get('/spread', async (ctx) => {
    const { token_id } = validate(marketDataRequest.token, ctx.query);
    ctx.body = { spread: (await d.spreads([token_id]))[token_id] };
  });
  r.post('/spreads', readBody, async (ctx) => {
    ctx.body = await d.spreads(validate(marketDataRequest.tokens, ctx.request.body).map((x) => x.token_id));
  });
  r.get('/tick-size', async (ctx) => {
    ctx.body = await d.tickSize(validate(marketDataRequest.token, ctx.query).token_id);
  });
  r.get('/market-trades', async (ctx) => {
    const q = validate(marketDataRequest.trades, ctx.query);
    ctx.body = await d.trades(q.market, q.limit);
  });
  r.get('/prices-history', async (ctx) => {
    ctx.body = await d.history(validate(marketDataRequest.history, ctx.query));
  });
  return r;
}

const NOT_FOUND = { 404: { description: 'a token no market trades', schema: errorBody } };
const tags = ['v1/market-data'];
documentRoutes(
  {
    method: 'get',
    path: '/v1/book',
    tags,
    summary: "A token's order book: aggregated levels, seq and hash",
    query: marketDataRequest.token,
    responses: { 200: { description: 'the book', schema: marketDataResponse.book }, ...NOT_FOUND },
  },
  {
    method: 'post',
    path: '/v1/books',
    tags,
    summary: `The books of up to ${MAX_BATCH} tokens`,
    body: marketDataRequest.tokens,
    responses: {
      200: { description: 'the books, in the order asked (duplicates once)', schema: z.array(marketDataResponse.book) },
      ...NOT_FOUND,
    },
  },
  {
    method: 'get',
    path: '/v1/price',
    tags,
    summary: 'Best price of a side: BUY the best bid, SELL the best ask (null when that side is empty)',
    query: marketDataRequest.price,
    responses: { 200: { description: 'the price', schema: marketDataResponse.price }, ...NOT_FOUND },
  },
  {
    method: 'post',
    path: '/v1/prices',
    tags,
    summary: `Best prices of up to ${MAX_BATCH} token and side pairs`,
    body: marketDataRequest.prices,
    responses: { 200: { description: 'token id → side → price', schema: marketDataResponse.prices }, ...NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/midpoint',
    tags,
    summary: '(best bid + best ask) / 2, exact (null when a side is empty)',
    query: marketDataRequest.token,
    responses: { 200: { description: 'the midpoint', schema: marketDataResponse.mid }, ...NOT_FOUND },
  },
  {
    method: 'post',
    path: '/v1/midpoints',
    tags,
    summary: `Midpoints of up to ${MAX_BATCH} tokens`,
    body: marketDataRequest.tokens,
    responses: { 200: { description: 'token id → midpoint', schema: marketDataResponse.byToken }, ...NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/spread',
    tags,
    summary: 'best ask − best bid (null when a side is empty)',
    query: marketDataRequest.token,
    responses: { 200: { description: 'the spread', schema: marketDataResponse.spread }, ...NOT_FOUND },
  },
  {
    method: 'post',
    path: '/v1/spreads',
    tags,
    summary: `Spreads of up to ${MAX_BATCH} tokens`,
    body: marketDataRequest.tokens,
    responses: { 200: { description: 'token id → spread', schema: marketDataResponse.byToken }, ...NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/tick-size',
    tags,
    summary: "The token's market tick",
    query: marketDataRequest.token,
    responses: { 200: { description: 'the tick', schema: marketDataResponse.tick }, ...NOT_FOUND },
  },
  {
    method: 'get',
    path: '/v1/market-trades',
    tags,
    summary: `A market's most recent trades, newest first (at most ${MAX_MARKET_TRADES}; no owners or wallets)`,
    query: marketDataRequest.trades,
    responses: {
      200: { description: 'the trades', schema: marketDataResponse.trades },
      404: { description: 'a market the catalog does not know', schema: errorBody },
    },
  },
  {
    method: 'get',
    path: '/v1/prices-history',
    tags,
    summary: `Last trade price per bucket of fidelity minutes, in the token's terms (at most ${MAX_HISTORY_POINTS} points)`,
    query: marketDataRequest.history,
    responses: { 200: { description: 'points { t: bucket start (unix s), p }', schema: marketDataResponse.history }, ...NOT_FOUND },
  },
);

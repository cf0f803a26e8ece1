// The market page (issue 18): static files from ui/ at the repo root, no build step. A fixed list
// of files, read once when the routes are made (a request names a key of that list, never a path:
// nothing outside the folder can be reached), each with its content type, an ETag and caching
// headers, and a Content-Security-Policy that allows only this origin's scripts, styles and
// connections (the page's REST reads and the /ws/market channel).
import Router from '@koa/router';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Context } from 'koa';
import { notFound } from '../errors.ts';
import { documentRoutes, validate } from '../openapi.ts';
import { errorBody } from '../../api/schemas.ts';

const UI_DIR = new URL('../../../ui/', import.meta.url);

/** Every file the page is made of: name → content type. Anything else under /ui is a 404. */
export const UI_ASSETS: Record<string, string> = {
  'market.js': 'text/javascript; charset=utf-8',
  'book.js': 'text/javascript; charset=utf-8',
  'feed.js': 'text/javascript; charset=utf-8',
  'chart.js': 'text/javascript; charset=utf-8',
  'market.css': 'text/css; charset=utf-8',
};
const PAGE = 'market.html';

export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

function load(name: string, type: string): StaticFile {
  const body = readFileSync(new URL(name, UI_DIR));
  return { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"` };
}

export const uiRequest = {
  page: z.object({ condition_id: z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'a market is a condition id: 0x + 64 hex digits') }),
  asset: z.object({ name: z.string().max(64) }),
};

/**
 * GET /ui/markets/:condition_id (the page; 404 for a market the catalog does not know) and
 * GET /ui/assets/:name (its scripts and style). `market` looks a condition id up.
 */
export function uiRoutes(o: { market: (conditionId: string) => Promise<unknown | null> }) {
  const page = load(PAGE, 'text/html; charset=utf-8');
  const assets = new Map(Object.entries(UI_ASSETS).map(([name, type]) => [name, load(name, type)]));
  const r = new Router({ prefix: '/ui' });

  const send = (ctx: Context, f: StaticFile, cache: string) => {
    ctx.set('Cache-Control', cache);
    ctx.set('ETag', f.etag);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Content-Security-Policy', CSP);
    ctx.type = f.type;
    if (ctx.get('if-none-match') === f.etag) {
      ctx.status = 304;
      return;
    }
    ctx.body = f.body;
  };

  r.get('/markets/:condition_id', async (ctx) => {
    const id = validate(uiRequest.page, ctx.params).condition_id.toLowerCase();
    if (!(await o.market(id))) throw notFound(`no market ${id}`);
    send(ctx, page, 'no-cache'); // revalidated each load: a new release shows at once
  });
  r.get('/assets/:name', (ctx) => {
    const f = assets.get(validate(uiRequest.asset, ctx.params).name);
    if (!f) throw notFound('no such file');
    send(ctx, f, 'public, max-age=300'); // not fingerprinted: a short life, then revalidated by ETag
  });
  return r;
}

const tags = ['ui'];
documentRoutes(
  {
    method: 'get',
    path: '/ui/markets/:condition_id',
    tags,
    summary: "A market's page: depth ladder, recent trades, price chart, live over /ws/market (polling the REST reads without it)",
    params: uiRequest.page,
    responses: {
      200: { description: 'HTML', schema: z.string(), contentType: 'text/html' },
      400: { description: 'not a condition id', schema: errorBody },
      404: { description: 'a market the catalog does not know', schema: errorBody },
    },
  },
  {
    method: 'get',
    path: '/ui/assets/:name',
    tags,
    summary: `The page's scripts and style: ${Object.keys(UI_ASSETS).join(', ')}`,
    params: uiRequest.asset,
    responses: {
      200: { description: 'JavaScript module or CSS', schema: z.string(), contentType: 'text/javascript' },
      404: { description: 'not one of the files', schema: errorBody },
    },
  },
);

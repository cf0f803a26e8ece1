// The Koa front door: request ids and logs, errors, the request line's checks, the per-IP limit of
// the order book, and the routers it is given.
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import type Router from '@koa/router';
import { badRequest, errorMiddleware, isClientGone } from './errors.ts';
import { defaultEdge, type Edge } from './edge.ts';
import { limit } from './rate-limit.ts';
import { requestContext } from '../log.ts';
import { docsRoutes } from './routes/docs.ts';

export interface AppLog {
  info(o: object, m?: string): void;
  error(o: object, m?: string): void;
  debug?(o: object, m?: string): void;
}

/** Probes and scrapes are logged at debug level, every other request at info. */
const QUIET = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Koa app of the given routers. Nothing reads a request body here: each route reads its own after
 * its guards (`edge.body`, src/http/body.ts), so authentication and rate limits come first and a
 * refused caller's body is never kept. Before any route: the path and query string must be clean
 * (strict UTF-8, no control character), the Host a host, and /v1 requests within the per-IP limit.
 */
export function buildApp(
  routers: Router[],
  log: AppLog,
  observe?: (route: string, method: string, status: number, seconds: number) => void,
  edge: Edge = defaultEdge(),
) {
  // Forwarded headers (X-Forwarded-Host/Proto/For) are believed only behind a proxy (TRUST_PROXY=1).
  const app = new Koa({ proxy: edge.trustProxy });
  // A client that goes away (mid-body, mid-stream) is normal, not an error worth a stack trace.
  app.on('error', (err: any) => {
    if (isClientGone(err)) {
      log.debug?.({ code: err.code ?? err.message }, 'client went away');
      return;
    }
    // Malformed HTTP from a client (llhttp's HPE_* codes) is the client's problem: one line, no stack.
    if (typeof err?.code === 'string' && err.code.startsWith('HPE_')) {
      log.info({ code: err.code, reason: err.reason }, 'malformed HTTP request');
      return;
    }
    log.error({ err }, 'koa error');
  });
  app.use(async (ctx, next) => {
    const started = process.hrtime.bigint();
    const id = ctx.get('x-request-id') || randomUUID();
    ctx.set('x-request-id', id);
    ctx.state.requestId = id;
    try {
      await requestContext.run({ reqId: id }, next);
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as any)._matchedRoute ?? 'unmatched';
      observe?.(String(route), ctx.method, ctx.status, seconds);
      const line: Record<string, unknown> = {
        reqId: id,
        method: ctx.method,
        path: ctx.path,
        route: String(route),
        status: ctx.status,
        ms: Math.round(seconds * 1e6) / 1000,
      };
      if (ctx.state.clientGone) log.info({ ...line, aborted: ctx.state.clientGone }, 'request aborted by the client');
      else if (ctx.status >= 500) log.error(line, 'request failed');
      else if (QUIET.has(ctx.path)) log.debug?.(line, 'request');
      else log.info(line, 'request');
    }
  });
  // Lines the error handler writes carry the request id too, whatever logger the app was given.
  app.use(errorMiddleware({ error: (o, m) => log.error({ reqId: requestContext.getStore()?.reqId, ...o }, m) }));
  app.use(cleanRequestLine);
  const perIp = limit(edge.limits.ip, (ctx) => ctx.ip || 'unknown', 'from this address');
  app.use((ctx, next) => (ctx.path.startsWith('/v1/') ? perIp(ctx, next) : next()));
  for (const r of [...routers, docsRoutes()]) app.use(r.routes()).use(r.allowedMethods());
  return app;
}

/** A host name, IPv4 or [IPv6] literal, with an optional port. */
const HOST = /^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** 400 for a path or query string that is not percent-encoded UTF-8 or holds a control character, or a Host that is not a host. */
async function cleanRequestLine(ctx: Context, next: Next) {
  for (const [part, raw] of [
    ['path', ctx.path],
    ['query string', ctx.querystring],
  ] as const) {
    if (!raw) continue;
    let text: string;
    try {
      text = decodeURIComponent(raw.replace(/\+/g, ' '));
    } catch {
      throw badRequest(`the ${part} is not percent-encoded UTF-8`);
    }
    if (CONTROL.test(text)) throw badRequest(`the ${part} holds a control character`);
  }
  const host = ctx.host;
  if (host && !HOST.test(host)) throw badRequest(hostMessage(ctx));
  await next();
}

const hostMessage = (ctx: Context) =>
  ctx.app.proxy && ctx.get('x-forwarded-host') ? 'X-Forwarded-Host is not a valid host' : 'the Host header is not a valid host';

// The Koa front door: request ids and logs, body parsing, errors, and the routers it is given.
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import { errorMiddleware, malformedBody } from './errors.ts';
import { requestContext } from '../log.ts';
import { docsRoutes } from './routes/docs.ts';

export interface AppLog {
  info(o: object, m?: string): void;
  error(o: object, m?: string): void;
  debug?(o: object, m?: string): void;
}

/**
 * A router whose `guards` (auth middlewares on some of its routes, e.g. the webhook's secret) must
 * run before the request body is read: they are mounted ahead of the body parser, so that a
 * caller that fails them gets their answer whatever it sent as a body.
 */
export type GuardedRouter = Router & { guards?: Router };

/** Probes and scrapes are logged at debug level, every other request at info. */
const QUIET = new Set(['/healthz', '/readyz', '/metrics']);

export function buildApp(routers: GuardedRouter[], log: AppLog, observe?: (route: string, method: string, status: number, seconds: number) => void) {
  const app = new Koa({ proxy: true });
  // A client that goes away mid-stream (SSE) is normal, not an error worth a stack trace.
  app.on('error', (err: any) => {
    if (err?.code === 'ERR_STREAM_PREMATURE_CLOSE' || err?.code === 'ECONNRESET' || err?.code === 'EPIPE') return;
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
      const line = { reqId: id, method: ctx.method, path: ctx.path, route: String(route), status: ctx.status, ms: Math.round(seconds * 1e6) / 1000 };
      if (ctx.status >= 500) log.error(line, 'request failed');
      else if (QUIET.has(ctx.path)) log.debug?.(line, 'request');
      else log.info(line, 'request');
    }
  });
  // Lines the error handler writes carry the request id too, whatever logger the app was given.
  app.use(errorMiddleware({ error: (o, m) => log.error({ reqId: requestContext.getStore()?.reqId, ...o }, m) }));
  for (const r of routers) if (r.guards) app.use(r.guards.routes());
  app.use(bodyParser({
    enableTypes: ['json'], jsonLimit: '20mb', encoding: 'utf-8',
    onError: (err, ctx) => { throw malformedBody(ctx, err); },
  }));
  for (const r of [...routers, docsRoutes()]) app.use(r.routes()).use(r.allowedMethods());
  return app;
}

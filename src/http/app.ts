// The Koa front door: request ids and logs, body parsing, errors, and the routers it is given.
import { randomUUID } from 'node:crypto';
import Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import { errorMiddleware, HttpError } from './errors.ts';

export interface AppLog {
  info(o: object, m?: string): void;
  error(o: object, m?: string): void;
}

export function buildApp(routers: Router[], log: AppLog, observe?: (route: string, method: string, status: number, seconds: number) => void) {
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
      await next();
    } finally {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = (ctx as any)._matchedRoute ?? 'unmatched';
      observe?.(String(route), ctx.method, ctx.status, seconds);
      if (ctx.status >= 500) log.error({ reqId: id, method: ctx.method, path: ctx.path, status: ctx.status, ms: seconds * 1000 }, 'request failed');
    }
  });
  app.use(errorMiddleware(log));
  app.use(bodyParser({
    enableTypes: ['json'], jsonLimit: '20mb', encoding: 'utf-8',
    onError: (err) => { throw new HttpError(400, 'malformed_body', `the body is not valid JSON: ${err.message}`); },
  }));
  for (const r of routers) app.use(r.routes()).use(r.allowedMethods());
  return app;
}

// Liveness, readiness (database, bus, chain RPC) and Prometheus metrics.
import Router from '@koa/router';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  [name: string]: () => Promise<void>;
}

export function healthRoutes(checks: HealthChecks, registry: Registry) {
  const r = new Router();
  r.get('/healthz', (ctx) => { ctx.body = { status: 'ok' }; });
  r.get('/readyz', async (ctx) => {
    const results: Record<string, string> = {};
    let ok = true;
    await Promise.all(Object.entries(checks).map(async ([name, check]) => {
      try {
        await withTimeout(check(), 2000);
        results[name] = 'ok';
      } catch (e) {
        ok = false;
        results[name] = (e as Error).message || 'failed';
      }
    }));
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ready' : 'not_ready', checks: results };
  });
  r.get('/metrics', async (ctx) => {
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  });
  return r;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timed out')), ms);
    p.then((v) => { clearTimeout(t); resolve(v); }, (e) => { clearTimeout(t); reject(e); });
  });
}

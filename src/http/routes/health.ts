// Liveness (`/healthz`), readiness (`/readyz`: database, Kafka or the in-process bus, chain RPC) and
// Prometheus metrics (`/metrics`). A check resolves (optionally with a note such as "not configured")
// or throws; each is bounded by a timeout. /healthz answers 200 while the process serves requests
// (restarting would not bring Kafka back; `?verbose=1` adds the last readiness results it saw); /readyz
// answers 503 when any dependency is unreachable, and while the node is shutting down.
import Router from '@koa/router';
import { z } from 'zod';
import type { Registry } from 'prom-client';

export interface HealthChecks {
  [name: string]: () => Promise<void | string>;
}

export interface HealthOptions {
  /** Per-check timeout (default 2 s). */
  timeoutMs?: number;
  /** true once the node is closing: not ready. */
  closing?: () => boolean;
}

export const readiness = z
  .strictObject({
    status: z.enum(['ready', 'not_ready']),
    checks: z.record(z.string(), z.string()).meta({ description: '"ok", a note (e.g. "not configured") or the failure' }),
  })
  .meta({ id: 'Readiness' });

export const liveness = z
  .strictObject({
    status: z.literal('ok'),
    uptime_seconds: z.number().optional(),
    last_readiness: readiness.nullable().optional(),
  })
  .meta({ id: 'Liveness' });

export function healthRoutes(checks: HealthChecks, registry: Registry, opts: HealthOptions = {}) {
  const r = new Router();
  const started = Date.now();
  let last: z.infer<typeof readiness> | null = null;
  const ready = async () => {
    const results: Record<string, string> = {};
    let ok = true;
    await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          const note = await withTimeout(check(), opts.timeoutMs ?? 2000);
          results[name] = typeof note === 'string' && note ? note : 'ok';
        } catch (e) {
          ok = false;
          results[name] = (e as Error)?.message || 'failed';
        }
      }),
    );
    if (opts.closing?.()) {
      ok = false;
      results.node = 'shutting down';
    }
    last = { status: ok ? 'ready' : 'not_ready', checks: results };
    return last;
  };
  r.get('/healthz', (ctx) => {
    // `?verbose=1` adds the uptime and the last readiness results; the plain answer is { status: 'ok' }.
    ctx.body = ctx.query.verbose
      ? { status: 'ok', uptime_seconds: Math.round((Date.now() - started) / 1000), last_readiness: last }
      : { status: 'ok' };
  });
  r.get('/readyz', async (ctx) => {
    const res = await ready();
    ctx.status = res.status === 'ready' ? 200 : 503;
    ctx.body = res;
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
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

// Documented in ./docs.ts (with schemas that admit `readiness` and `liveness` above).

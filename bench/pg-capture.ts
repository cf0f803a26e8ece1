// A preload (not a test, not part of the service) that writes every statement a service node sends
// to its own database, in order, for bench/pg-replay.ts:
//   SERVICE_NODE_OPTIONS=--import=./bench/pg-capture.ts npx tsx bench/order-ratio.ts 3000
// One file per process, PG_CAPTURE_DIR/<pid>.jsonl (default /tmp/pg-capture), a line per statement:
// [ms since epoch, text, parameters or null, prepared statement's name or null]. Only the database of the node's DATABASE_URL is kept
// (not the bench's own). Plain erasable TypeScript: Node loads it before the service's loader.
import { mkdirSync, openSync, writeSync } from 'node:fs';
import pg from 'pg';

const url = process.env.DATABASE_URL;
const database = url ? new URL(url).pathname.slice(1) : null;
if (database) {
  const dir = process.env.PG_CAPTURE_DIR ?? '/tmp/pg-capture';
  mkdirSync(dir, { recursive: true });
  const out = openSync(`${dir}/${process.pid}.jsonl`, 'w');
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  (pg.Client.prototype as any).query = function (this: pg.Client, q: unknown, ...rest: unknown[]) {
    const text = typeof q === 'string' ? q : (q as { text?: unknown } | null)?.text;
    if (typeof text === 'string' && (this as any).database === database) {
      const values = (q as { values?: unknown[] } | null)?.values ?? (Array.isArray(rest[0]) ? rest[0] : null);
      const name = (q as { name?: unknown } | null)?.name ?? null;
      writeSync(out, JSON.stringify([Date.now(), text, values, name]) + '\n');
    }
    return query.call(this, q, ...rest);
  };
}

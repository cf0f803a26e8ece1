// A preload (not a test, not part of the service) that counts what a service node asks of the broker
// and of PostgreSQL: kafkajs requests by API (Produce, Fetch, Heartbeat, …) and pg queries, written
// as running totals four times a second for bench/request-count-report.ts:
//   PERF_MARKS=1 SERVICE_NODE_OPTIONS=--import=./bench/request-count.ts KAFKA_BROKERS=… \
//     npx tsx bench/order-ratio.ts 2> marks.log
// One file per process, REQUEST_COUNT_DIR/<pid>.jsonl (default /tmp/request-count), a line per
// quarter second: [CLOCK_MONOTONIC seconds (the clock of bench/cpu.ts perfMark), totals]. A broker
// serves requests, not records: at a fixed number of records, more and smaller requests cost it
// more. Plain erasable TypeScript: Node loads it before the service's loader.
import { appendFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(`${process.cwd()}/package.json`);
const totals: Record<string, number> = {};
const count = (what: string) => (totals[what] = (totals[what] ?? 0) + 1);

type Send = (this: unknown, args: { request: { apiName: string } }) => unknown;
const Connection = require('kafkajs/src/network/connection.js') as { prototype: { send: Send } };
const send = Connection.prototype.send;
Connection.prototype.send = function (this: unknown, args) {
  count(`kafka ${args.request.apiName}`);
  return send.call(this, args);
};

type Query = (this: unknown, ...args: unknown[]) => unknown;
const pg = require('pg') as { Client: { prototype: { query: Query } } };
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
  count('pg query');
  return query.apply(this, args);
};

const dir = process.env.REQUEST_COUNT_DIR ?? '/tmp/request-count';
mkdirSync(dir, { recursive: true });
const file = `${dir}/${process.pid}.jsonl`;
setInterval(() => appendFileSync(file, JSON.stringify([Number(process.hrtime.bigint()) / 1e9, totals]) + '\n'), 250).unref();

// Observability (issue 8, item 5) on real Kafka, PostgreSQL and the local chain: request ids on every
// request log line (and on lines written deeper while serving it), the Prometheus metrics the issue
// names, and /healthz and /readyz following the database, Kafka and the chain RPC.
import test from 'ava';
import { Writable } from 'node:stream';
import { startLocalChain, type LocalChain } from '../../../src/chain/local/index.ts';
import { Web3Gateway } from '../../../src/chain/gateway.ts';
import { testConfig, call, WEBHOOK_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { fixture } from '../../helpers/fixtures.ts';
import { startNode, type ServiceNode } from '../../../src/node.ts';
import { createLogger } from '../../../src/log.ts';
import { countSettlement } from '../../../src/metrics.ts';
import { KafkaBus } from '../../../src/runtime/kafka-bus.ts';
import { PARLAY_PROGRAM_ID } from '../../../src/chain/idl.ts';
import { sig } from '../../helpers/events.ts';

let chain: LocalChain;
let node: ServiceNode;
let db: { url: string; drop(): Promise<void> };
const lines: any[] = [];

test.before(async () => {
  chain = await startLocalChain();
  const boot = await chain.bootstrap();
  db = await freshDatabase();
  const cfg = testConfig({ DATABASE_URL: db.url, KAFKA_BROKERS, LOG_LEVEL: 'info' });
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      cb();
    },
  });
  node = await startNode(cfg, {
    log: createLogger({ level: 'debug', nodeId: cfg.nodeId }, sink),
    chain: new Web3Gateway(chain.url, boot.authority),
  });
});
// The last test drops the database under the node: its close may wait on that database, so each
// step is bounded and the file still ends (the worker exits once its hooks are done).
const bounded = (p: Promise<unknown> | undefined, ms = 10_000) =>
  Promise.race([Promise.resolve(p).catch(() => undefined), new Promise((r) => setTimeout(r, ms).unref())]);
test.after.always(async () => {
  await bounded(node?.close());
  await bounded(chain?.close());
  await bounded(db?.drop());
});

const webhook = (body: unknown, reqId?: string) =>
  fetch(`${node.url}/api/parlays/webhooks/indexer/`, {
    method: 'POST',
    headers: { authorization: WEBHOOK_SECRET, 'content-type': 'application/json', ...(reqId ? { 'x-request-id': reqId } : {}) },
    body: JSON.stringify(body),
  });

test.serial('every request log line carries its request id, also lines written while serving it', async (t) => {
  const r = await fetch(`${node.url}/api/parlays/vault/`, { headers: { 'x-request-id': 'req-given-1' } });
  t.is(r.status, 200);
  t.is(r.headers.get('x-request-id'), 'req-given-1');
  const generated = await fetch(`${node.url}/api/parlays/vault/`);
  const genId = generated.headers.get('x-request-id');
  t.regex(genId ?? '', /^[0-9a-f-]{36}$/);
  // An undecodable event line of the program: dead-lettered and logged from the ingest, deep below the route.
  const pid = PARLAY_PROGRAM_ID.toBase58();
  const bad = [
    {
      slot: 5,
      blockTime: 1,
      indexWithinBlock: 0,
      meta: {
        err: null,
        logMessages: [`Program ${pid} invoke [1]`, 'Program data: bm90IGFuIGV2ZW50IGF0IGFsbA==', `Program ${pid} success`],
      },
      transaction: { signatures: [sig('sigObs1')], message: { accountKeys: [] } },
    },
  ];
  t.is((await webhook(bad, 'req-deep-1')).status, 200);
  await new Promise((res) => setTimeout(res, 100));
  const reqLine = lines.find((l) => l.msg === 'request' && l.reqId === 'req-given-1');
  t.truthy(reqLine, 'the request line');
  t.like(reqLine, { method: 'GET', path: '/api/parlays/vault/', status: 200, node: node.config.nodeId });
  t.is(typeof reqLine.ms, 'number');
  t.truthy(lines.find((l) => l.msg === 'request' && l.reqId === genId));
  const deep = lines.find((l) => /dead-lettered/.test(l.msg ?? ''));
  t.truthy(deep, 'the ingest logged the dead letter');
  t.is(deep.reqId, 'req-deep-1', 'a line written by the ingest carries the id of the request it served');
  for (const l of lines.filter((x) => x.msg === 'request')) t.truthy(l.reqId);
});

test.serial('/metrics: HTTP latency, asks, consumer lag, actors, snapshot age, settlements, dead letters, deferrals', async (t) => {
  for (const f of ['01', '02', '03']) t.is((await webhook(fixture(f))).status, 200, f);
  t.is((await webhook(fixture('07'))).status, 503, 'deferred');
  countSettlement('confirmed');
  countSettlement('failed', 2);
  // Right after the deliveries their actors are unsaved (checkpoints every RUNTIME_CHECKPOINT_MS):
  // the node says so, then snapshots them within that time even though no new record arrives.
  let text = (await call(node.url, 'GET', '/metrics')).body as string;
  t.regex(text, /^runtime_unsaved_actors\{[^}]*\} [1-9]/m, 'unsaved actors right after the deliveries');
  for (let i = 0; i < 100 && !/^runtime_unsaved_actors\{[^}]*\} 0$/m.test(text); i++) {
    await new Promise((r) => setTimeout(r, 100));
    text = (await call(node.url, 'GET', '/metrics')).body as string;
  }
  const has = (re: RegExp, what: string) => t.regex(text, re, what);
  has(/^runtime_unsaved_actors\{[^}]*\} 0$/m, 'every actor checkpointed while idle');
  has(/^http_request_duration_seconds_count\{[^}]*route="\/api\/parlays\/vault\/"[^}]*\} [1-9]/m, 'HTTP latency by route');
  has(/^asks_duration_seconds_count\{[^}]*topic="[^"]*parlay\.events"[^}]*outcome="ok"[^}]*\} [1-9]/m, 'asks by topic and outcome');
  has(/^consumer_lag\{[^}]*topic="[^"]*parlay\.events"[^}]*partition="\d+"[^}]*\} 0$/m, 'consumer lag per owned partition');
  has(/^runtime_actors\{[^}]*kind="parlay"[^}]*\} [1-9]/m, 'live parlay actors');
  has(/^runtime_actors\{[^}]*kind="vault"[^}]*\} 1/m, 'the vault actor');
  has(/^snapshot_age_seconds\{[^}]*topic="[^"]*parlay\.events"[^}]*\} [\d.e-]+$/m, 'snapshot age');
  has(/^settlement_outcomes_total\{[^}]*outcome="confirmed"[^}]*\} [1-9]/m, 'settlement outcomes (exported counter)');
  has(/^settlement_outcomes_total\{[^}]*outcome="failed"[^}]*\} [2-9]/m, 'settlement failures');
  has(/^dead_letters_total\{[^}]*reason="undecodable_event"[^}]*\} [1-9]/m, 'dead letters');
  has(/^webhook_deferrals_total\{[^}]*\} [1-9]/m, 'webhook deferrals');
  // (`sync` is timed only while the read cache holds or loads an answer: test/integration/parlay/read-cache.test.ts.)
  for (const phase of ['decode', 'claim', 'apply'])
    has(new RegExp(`^webhook_phase_seconds_count\\{[^}]*phase="${phase}"[^}]*\\} [1-9]`, 'm'), `webhook deliveries' ${phase} phase timed`);
  has(/^runtime_partitions_owned\{[^}]*\} [1-9]/m, 'owned partitions');
  // One node: every answer stays in the process, none direct nor through a reply topic.
  has(/^runtime_direct_replies_total\{[^}]*path="direct"[^}]*\} 0$/m, 'answers written to other nodes');
  has(/node="[^"]+"/, 'every series carries the node');
});

test.serial('/healthz and /readyz follow Kafka, the database and the RPC', async (t) => {
  const ok = await call(node.url, 'GET', '/readyz');
  t.is(ok.status, 200, JSON.stringify(ok.body));
  t.deepEqual(ok.body, { status: 'ready', checks: { database: 'ok', kafka: 'ok', rpc: 'ok' } });
  // RPC down (the next calls fail): not ready, and it says which.
  chain.faults.rpcError({ method: 'getSlot', count: 3 });
  const rpcDown = await call(node.url, 'GET', '/readyz');
  t.is(rpcDown.status, 503);
  t.is(rpcDown.body.status, 'not_ready');
  t.is(rpcDown.body.checks.database, 'ok');
  t.is(rpcDown.body.checks.kafka, 'ok');
  t.not(rpcDown.body.checks.rpc, 'ok');
  // Liveness stays up and reports the last readiness it saw.
  const live = await call(node.url, 'GET', '/healthz?verbose=1');
  t.is(live.status, 200);
  t.is(live.body.last_readiness.status, 'not_ready');
  t.deepEqual((await call(node.url, 'GET', '/healthz')).body, { status: 'ok' });
  // Recovers by itself.
  for (let i = 0; i < 5 && (await call(node.url, 'GET', '/readyz')).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  t.is((await call(node.url, 'GET', '/readyz')).status, 200);
  // An unreachable Kafka cluster fails the same ping the kafka check uses.
  const dead = new KafkaBus({ brokers: ['127.0.0.1:1'], clientId: 'obs-dead' });
  await t.throwsAsync(dead.ping(500));
  await dead.close();
  // The database goes away: not ready; liveness still answers.
  await db.drop();
  const dbDown = await call(node.url, 'GET', '/readyz');
  t.is(dbDown.status, 503);
  t.not(dbDown.body.checks.database, 'ok');
  t.is((await call(node.url, 'GET', '/healthz')).status, 200);
});

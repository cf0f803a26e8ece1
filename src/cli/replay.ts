// Rebuilding from the command topics. The topics are the record: every actor is a pure decider and
// every command carries its time, so running a partition's log again through the runtime's own
// PartitionWorker (the same fenced commit of effects + snapshots + inbox + offset) gives the same
// actors and the same read models.
//
// - `rebuild-read-models`: every partition of every command topic, after clearing what the
//   projections wrote (parlays, legs, vault, config, open orders, trades, ledger messages), the
//   snapshots, the inbox and the group's offsets.
// - `replay-partition`: one partition, after clearing that partition's share of the same
//   (its keys' rows, its snapshots, its commands' inbox entries, its offset).
//
// Both refuse while a node is a member of the service's consumer group (a live owner would race
// the replay; `--force` overrides) and when the log no longer starts at offset 0 (retention dropped
// records: the state could not be rebuilt). Replies are not sent again, messages the projections
// queue again for other topics (wallet releases, already in the wallet log) are dropped, and
// ledger messages the relay had published stay published (its marks, `ledger_published`, are kept). An interrupted run (Ctrl-C) is
// resumed by the same command: the job (`ops_jobs`) remembers that clearing is done, and every
// partition goes on from its committed offset.
import { randomBytes } from 'node:crypto';
import { start as startActorSystem, stop as stopActorSystem } from 'nact';
import { PartitionWorker, type WorkerDeps } from '../runtime/partition-worker.ts';
import { partitionFor } from '../runtime/partitioner.ts';
import type { RuntimeStore } from '../runtime/store-port.ts';
import type { Bus, Envelope } from '../runtime/types.ts';
import { VAULT_KEY } from '../../topics/names.ts';
import { createJob, getJob, saveJob, type Job } from './jobs.ts';
import { Progress } from './progress.ts';
import { OpsError, type Db, type OpsContext } from './context.ts';

/** Tables the projections write (src/store/projections/*): cleared before a full rebuild. */
export const DERIVED_TABLES = [
  'parlays',
  'parlay_legs',
  'vault',
  'program_config',
  'open_orders',
  'trades',
  'trade_parties',
  'ledger_messages',
];

export interface ReplayOptions {
  signal: AbortSignal;
  force?: boolean;
  restart?: boolean;
  quiet?: boolean;
}

interface Target {
  topic: string;
  partition: number;
  end: string;
}
interface State {
  phase: 'clearing' | 'replaying' | 'done';
  targets: Target[];
  outboxMax: string;
  /** per "market|topic": the highest seq published before the replay */
  published: Record<string, string>;
  clearedInbox?: number;
}

export interface ReplayResult {
  status: 'done' | 'interrupted';
  partitions: number;
  records: number;
  resumed: boolean;
}

const idOf = (t: { topic: string; partition: number }) => `${t.topic}/${t.partition}`;

async function guard(ctx: OpsContext, targets: { topic: string; partition: number }[], force?: boolean) {
  const bus = ctx.bus();
  const members = await bus.groupMembers(ctx.groupId);
  if (members.length && !force) {
    throw new OpsError(
      `nodes are running in consumer group ${ctx.groupId} (${members.map((m) => m.clientId).join(', ')}): stop them first (a live owner would race the replay), or pass --force`,
    );
  }
  for (const topic of new Set(targets.map((t) => t.topic))) {
    const offs = await bus.offsets(topic);
    const cut = offs.filter((o) => targets.some((t) => t.topic === topic && t.partition === o.partition) && o.low > 0n);
    if (cut.length && !force)
      throw new OpsError(
        `${topic} no longer holds its first records (partition ${cut[0].partition} starts at ${cut[0].low}): the state cannot be rebuilt from the topic`,
      );
  }
}

async function targetsOf(ctx: OpsContext, which: { topic: string; partition?: number }[]): Promise<Target[]> {
  const bus = ctx.bus();
  const out: Target[] = [];
  for (const w of which) {
    let offs;
    try {
      offs = await bus.offsets(w.topic);
    } catch {
      throw new OpsError(`topic ${w.topic} does not exist`);
    }
    for (const o of offs)
      if (w.partition === undefined || w.partition === o.partition)
        out.push({ topic: w.topic, partition: o.partition, end: o.high.toString() });
    if (w.partition !== undefined && !offs.some((o) => o.partition === w.partition))
      throw new OpsError(`${w.topic} has no partition ${w.partition} (it has ${offs.length})`);
  }
  return out;
}

async function publishedMarks(db: Db, markets?: string[]): Promise<Record<string, string>> {
  const rows = await db.execute(
    `select market, topic, seq::text as seq from ledger_published ${markets ? 'where market in (?)' : ''}`,
    markets ? [markets.length ? markets : ['']] : [],
  );
  return Object.fromEntries(rows.map((r: any) => [`${r.market}|${r.topic}`, r.seq]));
}

async function finish(ctx: OpsContext, job: Job<any, State>) {
  const marks = Object.entries(job.state.published).map(([k, seq]) => {
    const [market, topic] = k.split('|');
    return { market, topic, seq: Number(seq) };
  });
  await ctx.orm.em.fork().transactional(async (em: any) => {
    await em.execute('delete from outbox where id > ?', [job.state.outboxMax]);
    if (marks.length) {
      // The marks are never cleared; a job saved by the version before (its marks read from the
      // rows' flags) puts them back as they were.
      await em.execute(
        `insert into ledger_published (market, topic, seq) select t.market, t.topic, t.seq from jsonb_to_recordset(?::jsonb) as t(market text, topic text, seq bigint)
         on conflict (market, topic) do update set seq = greatest(ledger_published.seq, excluded.seq)`,
        [JSON.stringify(marks)],
      );
    }
  });
  job.state.phase = 'done';
  job.status = 'done';
  await saveJob(ctx.db(), job);
}

/** Replays the targets from their committed offsets to their recorded ends through PartitionWorkers. */
async function replay(
  ctx: OpsContext,
  targets: Target[],
  o: ReplayOptions,
  label: string,
): Promise<{ records: number; interrupted: boolean }> {
  const bus = ctx.bus();
  const scope = new Map(targets.map((t) => [idOf(t), BigInt(t.end)]));
  const positions = new Map<string, bigint>();
  const starts = new Map<string, bigint>();
  for (const t of targets) {
    const stored = await ctx.store.loadOffset(ctx.groupId, t.topic, t.partition);
    const low = (await bus.offsets(t.topic)).find((x) => x.partition === t.partition)?.low ?? 0n;
    positions.set(idOf(t), stored ?? low);
    starts.set(idOf(t), low);
  }
  const total = targets.reduce((a, t) => a + Number(BigInt(t.end) - starts.get(idOf(t))!), 0);
  const doneCount = () =>
    targets.reduce((a, t) => {
      const p = positions.get(idOf(t))!;
      const e = BigInt(t.end);
      return a + Number((p < e ? p : e) - starts.get(idOf(t))!);
    }, 0);
  const bar = new Progress(label, total, { quiet: o.quiet }).resumeAt(doneCount());
  const finished = () => targets.every((t) => positions.get(idOf(t))! >= BigInt(t.end));
  if (finished()) {
    bar.finish('nothing to replay');
    return { records: 0, interrupted: false };
  }

  const store: RuntimeStore = {
    loadOffset: (g, t, p) => ctx.store.loadOffset(g, t, p),
    loadPosition: (g, t, p) => ctx.store.loadPosition(g, t, p),
    replayFacts: (t, p, ids, offsets) => ctx.store.replayFacts(t, p, ids, offsets),
    resetOffset: (g, t, p, n, owner) => ctx.store.resetOffset(g, t, p, n, owner),
    loadSnapshots: (k, keys) => ctx.store.loadSnapshots(k, keys),
    loadJournal: (k, keys) => ctx.store.loadJournal(k, keys),
    journaledKeys: (t, p) => ctx.store.journaledKeys(t, p),
    reader: ctx.store.reader,
    findInbox: (keys) => ctx.store.findInbox(keys),
    deadLetter: (r) => ctx.store.deadLetter(r),
    async commit(a) {
      // A command handed on the first time is in the log of the topic it went to: replayed there, not sent again.
      const ok = await ctx.store.commit({ ...a, forwards: [] });
      if (ok) positions.set(`${a.topic}/${a.partition}`, a.next);
      return ok;
    },
  };
  // Replies were answered when the commands first ran: nothing is sent again.
  const quiet: Bus = {
    durable: true,
    ensureTopics: (s) => bus.ensureTopics(s),
    partitionsOf: (t) => bus.partitionsOf(t),
    send: async () => undefined,
    consume: (x) => bus.consume(x),
    close: async () => undefined,
  };
  const system = startActorSystem();
  const deps: WorkerDeps = {
    bus: quiet,
    store,
    groupId: ctx.groupId,
    owner: ctx.clientId,
    system,
    log: ctx.log,
    kindFor: (topic, key) => ctx.kinds.find((k) => k.kind.topic === topic && k.owns(key))?.kind,
  };
  const workers = new Map<string, PartitionWorker>();
  const group = `${ctx.cfg.topicPrefix}ops-replay-${randomBytes(4).toString('hex')}`;
  let failure: Error | null = null;
  const handle = await bus.consume({
    groupId: group,
    topics: [...new Set(targets.map((t) => t.topic))],
    fromBeginning: true,
    onBatch: async (batch) => {
      const id = idOf(batch);
      const end = scope.get(id);
      if (end === undefined || o.signal.aborted || failure) return { done: true };
      const records = batch.records.filter((r) => r.offset < end);
      if (!records.length) return { done: true };
      let w = workers.get(id);
      if (!w) {
        w = new PartitionWorker(deps, batch.topic, batch.partition);
        workers.set(id, w);
      }
      try {
        const out = await w.handle({ ...batch, records });
        bar.set(doneCount());
        return out;
      } catch (e) {
        failure = e as Error;
        return { done: true };
      }
    },
  });
  try {
    while (!finished() && !o.signal.aborted && !failure) await new Promise((r) => setTimeout(r, 100));
  } finally {
    await handle.stop();
    for (const w of workers.values()) w.reset();
    stopActorSystem(system);
    await bus.deleteGroups([group]);
  }
  if (failure) throw failure;
  const interrupted = !finished();
  bar.finish(interrupted ? 'interrupted' : 'done');
  return { records: doneCount(), interrupted };
}

export async function rebuildReadModels(ctx: OpsContext, o: ReplayOptions): Promise<ReplayResult> {
  const db = ctx.db();
  const JOB = 'rebuild-read-models';
  let job = await getJob<{ topics: string[] }, State>(db, JOB);
  const resumed = !!job && job.status === 'running' && !o.restart;
  const topics = [...new Set(ctx.kinds.map((k) => k.kind.topic))];
  if (!resumed) {
    const targets = await targetsOf(
      ctx,
      topics.map((topic) => ({ topic })),
    );
    await guard(ctx, targets, o.force);
    const [{ max }] = await db.execute('select coalesce(max(id), 0)::text as max from outbox');
    job = await createJob<{ topics: string[] }, State>(
      db,
      JOB,
      'rebuild-read-models',
      { topics },
      {
        phase: 'clearing',
        targets,
        outboxMax: max,
        published: await publishedMarks(db),
      },
    );
  } else {
    await guard(ctx, job!.state.targets, o.force);
  }
  const j = job!;
  if (j.state.phase === 'clearing') {
    await ctx.orm.em.fork().transactional(async (em: any) => {
      const present = (
        await em.execute(`select table_name from information_schema.tables where table_schema = current_schema() and table_name in (?)`, [
          DERIVED_TABLES,
        ])
      ).map((r: any) => r.table_name);
      await em.execute(`truncate ${[...present, 'actor_snapshots', 'command_inbox'].map((t) => `"${t}"`).join(', ')}`);
      await em.execute('delete from consumer_offsets where group_id = ?', [ctx.groupId]);
      j.state.phase = 'replaying';
      await em.execute('update ops_jobs set state = ?::jsonb, updated_at = now() where id = ?', [JSON.stringify(j.state), JOB]);
    });
  }
  const r = await replay(ctx, j.state.targets, o, 'rebuild: replaying the command topics');
  if (r.interrupted) return { status: 'interrupted', partitions: j.state.targets.length, records: r.records, resumed };
  await finish(ctx, j);
  return { status: 'done', partitions: j.state.targets.length, records: r.records, resumed };
}

/** Short topic names (`parlay.events`) are taken with the configured TOPIC_PREFIX. */
export function fullTopic(ctx: OpsContext, topic: string): string {
  const known = new Set(ctx.kinds.map((k) => k.kind.topic));
  if (known.has(topic)) return topic;
  if (known.has(ctx.cfg.topicPrefix + topic)) return ctx.cfg.topicPrefix + topic;
  throw new OpsError(`unknown command topic ${topic} (one of ${[...known].join(', ')})`);
}

export async function replayPartition(ctx: OpsContext, topicArg: string, partition: number, o: ReplayOptions): Promise<ReplayResult> {
  const topic = fullTopic(ctx, topicArg);
  const db = ctx.db();
  const JOB = `replay-partition:${topic}/${partition}`;
  let job = await getJob<{ topic: string; partition: number }, State>(db, JOB);
  const resumed = !!job && job.status === 'running' && !o.restart;
  if (!resumed) {
    const targets = await targetsOf(ctx, [{ topic, partition }]);
    await guard(ctx, targets, o.force);
    const [{ max }] = await db.execute('select coalesce(max(id), 0)::text as max from outbox');
    job = await createJob(db, JOB, 'replay-partition', { topic, partition }, {
      phase: 'clearing',
      targets,
      outboxMax: max,
      published: {},
    } as State);
  } else {
    await guard(ctx, job!.state.targets, o.force);
  }
  const j = job!;
  if (j.state.phase === 'clearing') {
    const n = (await ctx.bus().offsets(topic)).length;
    const mine = (key: string) => partitionFor(key, n) === partition;
    // Every idempotency key the partition's log carries: their inbox entries are made again.
    const ids = await commandIds(ctx, j.state.targets, o);
    if (ids === null) return { status: 'interrupted', partitions: 1, records: 0, resumed };
    const markets =
      topic === ctx.topics.book
        ? (
            await db.execute(
              'select distinct market from open_orders union select distinct market from trades union select distinct market from ledger_messages',
            )
          )
            .map((r: any) => r.market)
            .filter(mine)
        : [];
    const parlays =
      topic === ctx.topics.parlay ? (await db.execute('select parlay_id::text as id from parlays')).map((r: any) => r.id).filter(mine) : [];
    j.state.published = markets.length ? await publishedMarks(db, markets) : {};
    j.state.clearedInbox = ids.length;
    await ctx.orm.em.fork().transactional(async (em: any) => {
      if (markets.length) {
        for (const t of ['open_orders', 'trades', 'trade_parties', 'ledger_messages'])
          await em.execute(`delete from "${t}" where market in (?)`, [markets]);
      }
      if (parlays.length) {
        await em.execute('delete from parlay_legs where parlay_id::text in (?)', [parlays]);
        await em.execute('delete from parlays where parlay_id::text in (?)', [parlays]);
      }
      if (topic === ctx.topics.parlay && mine(VAULT_KEY)) {
        await em.execute('delete from vault');
        await em.execute('delete from program_config');
      }
      await em.execute('delete from actor_snapshots where topic = ? and partition = ?', [topic, partition]);
      for (let i = 0; i < ids.length; i += 1000) await em.execute('delete from command_inbox where key in (?)', [ids.slice(i, i + 1000)]);
      await em.execute('delete from consumer_offsets where group_id = ? and topic = ? and partition = ?', [ctx.groupId, topic, partition]);
      j.state.phase = 'replaying';
      await em.execute('update ops_jobs set state = ?::jsonb, updated_at = now() where id = ?', [JSON.stringify(j.state), JOB]);
    });
  }
  const r = await replay(ctx, j.state.targets, o, `replay ${topic}/${partition}`);
  if (r.interrupted) return { status: 'interrupted', partitions: 1, records: r.records, resumed };
  await finish(ctx, j);
  return { status: 'done', partitions: 1, records: r.records, resumed };
}

/** The envelope ids in the targets' logs (null when interrupted). */
async function commandIds(ctx: OpsContext, targets: Target[], o: ReplayOptions): Promise<string[] | null> {
  const ids = new Set<string>();
  const ok = await scan(ctx, targets, o, 'replay: reading command ids', (r) => {
    try {
      const e = JSON.parse(r.value) as Envelope;
      if (e?.id) ids.add(e.id);
    } catch {
      /* dead-lettered when replayed */
    }
  });
  return ok ? [...ids] : null;
}

/** Reads the targets' records from their first offset to their ends (no processing). */
export async function scan(
  ctx: OpsContext,
  targets: (Target & { from?: bigint })[],
  o: { signal: AbortSignal; quiet?: boolean },
  label: string,
  each: (r: { key: string; value: string; offset: bigint; partition: number; topic: string }) => void,
): Promise<boolean> {
  const bus = ctx.bus();
  const pos = new Map<string, bigint>();
  const from = new Map<string, bigint>();
  for (const t of targets) {
    const low = (await bus.offsets(t.topic)).find((x) => x.partition === t.partition)?.low ?? 0n;
    const f = t.from !== undefined && t.from > low ? t.from : low;
    from.set(idOf(t), f);
    pos.set(idOf(t), f);
  }
  const total = targets.reduce((a, t) => a + Math.max(0, Number(BigInt(t.end) - from.get(idOf(t))!)), 0);
  const bar = new Progress(label, total, { quiet: o.quiet });
  const finished = () => targets.every((t) => pos.get(idOf(t))! >= BigInt(t.end));
  if (finished()) return true;
  const group = `${ctx.cfg.topicPrefix}ops-scan-${randomBytes(4).toString('hex')}`;
  let seen = 0;
  const handle = await bus.consume({
    groupId: group,
    topics: [...new Set(targets.map((t) => t.topic))],
    fromBeginning: true,
    onBatch: async (batch) => {
      const id = idOf(batch);
      const t = targets.find((x) => idOf(x) === id);
      if (!t || o.signal.aborted) return { done: true };
      const start = pos.get(id)!;
      if (batch.records[0].offset > start) return { seek: start };
      if (batch.records[batch.records.length - 1].offset < start) return { seek: start };
      for (const r of batch.records) {
        if (r.offset < start || r.offset >= BigInt(t.end)) continue;
        each(r);
        seen += 1;
      }
      pos.set(id, batch.records[batch.records.length - 1].offset + 1n);
      bar.set(seen);
      return { done: true };
    },
  });
  try {
    while (!finished() && !o.signal.aborted) await new Promise((r) => setTimeout(r, 50));
  } finally {
    await handle.stop();
    await bus.deleteGroups([group]);
  }
  bar.finish(finished() ? 'done' : 'interrupted');
  return finished();
}

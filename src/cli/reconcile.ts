// Reconciles the parlay mirror from the chain. A webhook provider drops a delivery for good after its
// last retry, so the mirror can miss events; this reads the program's own history instead:
// getSignaturesForAddress(program) back to a slot, then getTransaction of each (oldest first, with
// its index within the block from getBlock), and applies them through the webhook's own ingest path
// (decode → Parlay / Vault actors), which is idempotent: what the mirror already holds changes nothing.
//
// Two phases, both resumable from a persisted cursor (ops_jobs / ops_job_items, job id
// `reconcile`): listing (the paging cursor `before` and every signature found) and applying (each
// signature marked done once applied). Ctrl-C stops after the current step; the same command
// resumes; `--restart` starts afresh.
import { hostname } from 'node:os';
import { Connection, PublicKey } from '@solana/web3.js';
import { Asker } from '../runtime/asker.ts';
import { ingestTransactions } from '../parlay/ingest.ts';
import { EventIdentities } from '../parlay/event-identity.ts';
import type { RawTransaction } from '../parlay/webhook-schema.ts';
import { PARLAY_PROGRAM_ID } from '../chain/idl.ts';
import { createJob, getJob, saveJob, type Job } from './jobs.ts';
import { Progress } from './progress.ts';
import { OpsError, type OpsContext } from './context.ts';

export interface ReconcileOptions {
  sinceSlot: number;
  untilSlot?: number;
  rpcUrl?: string;
  /** Apply through a node's webhook endpoint instead of in-process asks over Kafka. */
  webhookUrl?: string;
  webhookSecret?: string;
  /** getSignaturesForAddress page size (max 1000). */
  page?: number;
  /** Transactions applied per ingest call. */
  batch?: number;
  /** Pause between RPC calls (rate-limited providers). */
  paceMs?: number;
  restart?: boolean;
  signal: AbortSignal;
  quiet?: boolean;
}

interface Params {
  sinceSlot: number;
  untilSlot: number | null;
  programId: string;
}
interface State {
  phase: 'listing' | 'applying' | 'done';
  before: string | null;
  listed: number;
  applied: number;
  skipped: number;
  processed: number;
  deferred: string[];
  passes: number;
}

export interface ReconcileResult {
  status: 'done' | 'interrupted';
  listed: number;
  applied: number;
  processed: number;
  skipped: number;
  /** signatures whose events still wait for a row the mirror lacks (their parlay began before since-slot) */
  deferred: string[];
  resumed: boolean;
}

const JOB = 'reconcile';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Applier {
  apply(txs: RawTransaction[]): Promise<{ processed: number; skipped: number; deferred: number }>;
  close(): Promise<void>;
}

async function inProcessApplier(ctx: OpsContext, programId: string): Promise<Applier> {
  const bus = ctx.bus();
  // One reply topic per host, reused by every run: deleting a topic would break the producers of
  // the nodes that answered on it (kafkajs keeps refreshing the metadata of every topic it sent to).
  const asker = new Asker(bus, `${ctx.cfg.topicPrefix}ops-${hostname()}`, ctx.cfg.askTimeoutMs);
  await bus.ensureTopics([{ topic: ctx.topics.parlay, partitions: ctx.cfg.partitions }]);
  await asker.start();
  const deps = { asker, store: ctx.store, identities: new EventIdentities(ctx.db), topic: ctx.topics.parlay, programId, log: ctx.log };
  return { apply: (txs) => ingestTransactions(deps, txs), close: () => asker.stop() };
}

function webhookApplier(url: string, secret: string): Applier {
  return {
    async apply(txs) {
      for (let attempt = 0; ; attempt++) {
        const r = await fetch(url, {
          method: 'POST',
          headers: { authorization: secret, 'content-type': 'application/json' },
          body: JSON.stringify(txs),
        });
        const body: any = await r.json().catch(() => ({}));
        if (r.status === 200) return { processed: body.processed ?? 0, skipped: body.skipped ?? 0, deferred: 0 };
        if (r.status === 503 && body.error === 'deferred') return { processed: 0, skipped: 0, deferred: txs.length };
        if (r.status >= 500 && attempt < 5) {
          await sleep(200 * 2 ** attempt);
          continue;
        }
        throw new OpsError(`the webhook answered ${r.status}: ${JSON.stringify(body)}`, 1);
      }
    },
    close: async () => undefined,
  };
}

export async function reconcile(ctx: OpsContext, o: ReconcileOptions): Promise<ReconcileResult> {
  const rpcUrl = o.rpcUrl ?? ctx.cfg.solanaRpcUrl;
  if (!rpcUrl) throw new OpsError('no RPC: set SOLANA_RPC_URL or pass --rpc');
  const programId = ctx.cfg.programId ?? PARLAY_PROGRAM_ID.toBase58();
  const conn = new Connection(rpcUrl, { commitment: 'confirmed', disableRetryOnRateLimit: false });
  const db = ctx.db();
  let job = await getJob<Params, State>(db, JOB);
  const params: Params = { sinceSlot: o.sinceSlot, untilSlot: o.untilSlot ?? null, programId };
  const sameRun =
    job &&
    job.status === 'running' &&
    job.params.sinceSlot === params.sinceSlot &&
    job.params.untilSlot === params.untilSlot &&
    job.params.programId === programId;
  const resumed = !!sameRun && !o.restart;
  if (!resumed) {
    job = await createJob<Params, State>(db, JOB, 'reconcile', params, {
      phase: 'listing',
      before: null,
      listed: 0,
      applied: 0,
      skipped: 0,
      processed: 0,
      deferred: [],
      passes: 0,
    });
  }
  const j = job as Job<Params, State>;
  const pace = async () => {
    if (o.paceMs) await sleep(o.paceMs);
  };

  // ---- listing: newest to oldest, down to since-slot ------------------------------------------
  if (j.state.phase === 'listing') {
    const bar = new Progress('reconcile: listing signatures', 0, { quiet: o.quiet }).resumeAt(j.state.listed);
    const program = new PublicKey(programId);
    for (;;) {
      if (o.signal.aborted) {
        bar.finish('interrupted');
        return result(j, 'interrupted', resumed);
      }
      const page = await conn.getSignaturesForAddress(
        program,
        { before: j.state.before ?? undefined, limit: Math.min(o.page ?? 1000, 1000) },
        'confirmed',
      );
      await pace();
      const keep = page.filter(
        (s) => s.slot >= params.sinceSlot && (params.untilSlot === null || s.slot <= params.untilSlot) && s.err === null,
      );
      const reachedEnd = page.length === 0 || page[page.length - 1].slot < params.sinceSlot;
      // One transaction: the page's signatures and the cursor past them.
      await ctx.orm.em.fork().transactional(async (em: any) => {
        if (keep.length) {
          await em.execute(
            `insert into ops_job_items (job_id, seq, item, done) select ?, ? + a.i::int, a.item, false
             from jsonb_array_elements(?::jsonb) with ordinality as a(item, i)
             on conflict do nothing`,
            [JOB, j.state.listed, JSON.stringify(keep.map((s) => ({ signature: s.signature, slot: s.slot })))],
          );
        }
        j.state.listed += keep.length;
        if (page.length) j.state.before = page[page.length - 1].signature;
        if (reachedEnd) j.state.phase = 'applying';
        await em.execute('update ops_jobs set state = ?::jsonb, updated_at = now() where id = ?', [JSON.stringify(j.state), JOB]);
      });
      bar.set(j.state.listed);
      if (reachedEnd) break;
    }
    bar.finish(`${j.state.listed} transactions of the program since slot ${params.sinceSlot}`);
  }

  // ---- applying: oldest first, through the ingest path -----------------------------------------
  const applier = o.webhookUrl
    ? webhookApplier(o.webhookUrl, o.webhookSecret ?? ctx.cfg.webhookSecret ?? '')
    : await inProcessApplier(ctx, programId);
  try {
    const bar = new Progress('reconcile: applying', j.state.listed, { quiet: o.quiet }).resumeAt(j.state.applied);
    const blockIndex = new Map<number, string[]>();
    const indexOf = async (slot: number, signature: string) => {
      let sigs: string[] | undefined = blockIndex.get(slot);
      if (!sigs) {
        try {
          const b: any = await conn.getBlock(slot, {
            commitment: 'confirmed',
            maxSupportedTransactionVersion: 0,
            transactionDetails: 'signatures',
            rewards: false,
          } as any);
          sigs = (b?.signatures ?? []) as string[];
        } catch {
          sigs = [];
        }
        await pace();
        if (blockIndex.size > 1000) blockIndex.clear();
        blockIndex.set(slot, sigs);
      }
      return Math.max(0, sigs.indexOf(signature));
    };
    const deferred = new Set<string>(j.state.deferred);
    while (j.state.phase === 'applying') {
      if (o.signal.aborted) {
        bar.finish('interrupted');
        return result(j, 'interrupted', resumed);
      }
      // Oldest first: listing went newest first, so the highest seq is the oldest.
      const items: { seq: number; item: any }[] = await db.execute(
        `select seq, item from ops_job_items where job_id = ? and not done and not (item->>'signature' = any(?::text[])) order by seq desc limit ?`,
        [JOB, `{${[...deferred].map((s) => `"${s}"`).join(',')}}`, o.batch ?? 20],
      );
      if (!items.length) {
        // Deferred ones get more passes: what they wait for may have come later in the run.
        if (deferred.size && j.state.passes < 3) {
          j.state.passes += 1;
          deferred.clear();
          j.state.deferred = [];
          await saveJob(db, j);
          continue;
        }
        j.state.phase = 'done';
        j.status = 'done';
        await saveJob(db, j);
        break;
      }
      const txs: RawTransaction[] = [];
      for (const it of items) {
        const item = typeof it.item === 'string' ? JSON.parse(it.item) : it.item;
        const got = await conn.getTransaction(item.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
        await pace();
        if (!got) throw new OpsError(`transaction ${item.signature} is listed but the RPC does not return it`, 1);
        txs.push({
          slot: got.slot,
          blockTime: got.blockTime ?? null,
          indexWithinBlock: await indexOf(got.slot, item.signature),
          meta: { err: got.meta?.err ?? null, logMessages: got.meta?.logMessages ?? [] },
          transaction: { signatures: got.transaction.signatures, message: { accountKeys: [] } },
        } as RawTransaction);
      }
      let r = await applier.apply(txs);
      const done: number[] = items.map((i) => i.seq);
      if (r.deferred) {
        // Find which ones wait: apply one by one (idempotent), keep those aside for a later pass.
        done.length = 0;
        r = { processed: 0, skipped: 0, deferred: 0 };
        for (const [k, tx] of txs.entries()) {
          const one = await applier.apply([tx]);
          r.processed += one.processed;
          r.skipped += one.skipped;
          if (one.deferred) {
            deferred.add(tx.transaction.signatures[0]);
            r.deferred += 1;
          } else done.push(items[k].seq);
        }
      }
      j.state.processed += r.processed;
      j.state.skipped += r.skipped;
      j.state.applied += done.length;
      j.state.deferred = [...deferred];
      await ctx.orm.em.fork().transactional(async (em: any) => {
        if (done.length) await em.execute('update ops_job_items set done = true where job_id = ? and seq in (?)', [JOB, done]);
        await em.execute('update ops_jobs set state = ?::jsonb, updated_at = now() where id = ?', [JSON.stringify(j.state), JOB]);
      });
      bar.set(j.state.applied, deferred.size ? `(${deferred.size} deferred)` : '');
    }
    bar.finish(j.state.deferred.length ? `${j.state.deferred.length} still deferred` : 'done');
  } finally {
    await applier.close();
  }
  return result(j, 'done', resumed);
}

function result(j: Job<Params, State>, status: ReconcileResult['status'], resumed: boolean): ReconcileResult {
  return {
    status,
    listed: j.state.listed,
    applied: j.state.applied,
    processed: j.state.processed,
    skipped: j.state.skipped,
    deferred: j.state.deferred,
    resumed,
  };
}

// `ops dead-letters` lists dead letters; `ops replay-dead-letters` re-sends runtime dead letters
// (records a partition went past: unparsable, their decider threw, their commit failed on their
// data) to their topic with their key, then marks them replayed. The row stays: a rebuild must still
// skip the record at its old offset, and the re-sent record is a new one (dead-lettered again, under
// its new offset, if it still fails). Webhook dead letters have no topic: `reconcile` re-reads them
// from the chain. At least once: a replay interrupted between the send and the mark sends again
// next time (a command with an idempotency key is then answered from the inbox, not applied twice).
import { OpsError, type OpsContext } from './context.ts';

export interface DeadLetterView {
  id: string;
  source: string;
  /** Runtime dead letters: where the record was (null for webhook ones). */
  topic: string | null;
  partition: number | null;
  offset: string | null;
  key: string | null;
  reason: string;
  payload: string;
  created_at: string;
  replayed_at: string | null;
}

export interface DeadLetterFilter {
  /** A command topic, without the TOPIC_PREFIX (added here). */
  topic?: string;
  /** Sources starting with this (e.g. `webhook:`). */
  source?: string;
  /** Only those not replayed yet. */
  pending?: boolean;
  limit?: number;
}

export const LIST_LIMIT_MAX = 10_000;

const RUNTIME_SOURCE = /^(.+)\/(\d+)@(\d+)$/;

function view(r: any): DeadLetterView {
  const m = RUNTIME_SOURCE.exec(r.source);
  const iso = (d: unknown) => (d === null || d === undefined ? null : new Date(d as string).toISOString());
  return {
    id: String(r.id),
    source: r.source,
    topic: m ? m[1] : null,
    partition: m ? Number(m[2]) : null,
    offset: m ? m[3] : null,
    key: r.record_key ?? null,
    reason: r.reason,
    payload: r.payload,
    created_at: iso(r.created_at)!,
    replayed_at: iso(r.replayed_at),
  };
}

function where(ctx: OpsContext, f: DeadLetterFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  // Prefix compares, not LIKE: topic names carry `_` and `.`.
  if (f.topic) {
    const p = `${ctx.cfg.topicPrefix}${f.topic}/`;
    parts.push('left(source, ?) = ?');
    params.push(p.length, p);
  }
  if (f.source) {
    parts.push('left(source, ?) = ?');
    params.push(f.source.length, f.source);
  }
  if (f.pending) parts.push('replayed_at is null');
  return { sql: parts.length ? `where ${parts.join(' and ')}` : '', params };
}

export async function listDeadLetters(
  ctx: OpsContext,
  f: DeadLetterFilter,
): Promise<{ count: number; total: number; dead_letters: DeadLetterView[] }> {
  const limit = f.limit ?? 100;
  if (limit < 1 || limit > LIST_LIMIT_MAX) throw new OpsError(`--limit must be between 1 and ${LIST_LIMIT_MAX}`);
  const w = where(ctx, f);
  const db = ctx.db();
  const rows = await db.execute(
    `select id, source, reason, payload, record_key, created_at, replayed_at from dead_letters ${w.sql} order by id limit ?`,
    [...w.params, limit],
  );
  const total = await db.execute(`select count(*)::int as n from dead_letters ${w.sql}`, w.params);
  return { count: rows.length, total: total[0].n, dead_letters: rows.map(view) };
}

export interface ReplayDeadLettersOptions extends DeadLetterFilter {
  /** One dead letter by id; else every pending one the filter selects (`all` must say so). */
  id?: string;
  all?: boolean;
  /** Replay a dead letter already replayed (by id). */
  force?: boolean;
  signal: AbortSignal;
}

export interface ReplayDeadLettersResult {
  status: 'done' | 'interrupted';
  replayed: { id: string; source: string; topic: string; key: string }[];
  skipped: { id: string; source: string; why: string }[];
}

export async function replayDeadLetters(ctx: OpsContext, o: ReplayDeadLettersOptions): Promise<ReplayDeadLettersResult> {
  if (!o.id === !o.all) throw new OpsError('give --id N or --all (with --topic / --source to narrow it)');
  if (o.id !== undefined && !/^\d{1,18}$/.test(o.id)) throw new OpsError('--id must be a dead letter id (digits)');
  const db = ctx.db();
  let rows: any[];
  if (o.id !== undefined) {
    rows = await db.execute('select id, source, reason, payload, record_key, created_at, replayed_at from dead_letters where id = ?', [
      o.id,
    ]);
    if (!rows.length) throw new OpsError(`no dead letter ${o.id}`);
    const v = view(rows[0]);
    if (!v.topic)
      throw new OpsError(`dead letter ${o.id} (${v.source}) did not come off a topic: replay webhook deliveries with reconcile`);
    if (!v.key)
      throw new OpsError(`dead letter ${o.id} has no stored key (dead-lettered before keys were kept): cannot be re-sent to its partition`);
    if (v.replayed_at && !o.force) throw new OpsError(`dead letter ${o.id} was replayed at ${v.replayed_at} (--force replays it again)`);
  } else {
    const w = where(ctx, { ...o, pending: true });
    rows = await db.execute(
      `select id, source, reason, payload, record_key, created_at, replayed_at from dead_letters ${w.sql} order by id`,
      w.params,
    );
  }
  const out: ReplayDeadLettersResult = { status: 'done', replayed: [], skipped: [] };
  const bus = ctx.bus();
  for (const row of rows) {
    if (o.signal.aborted) {
      out.status = 'interrupted';
      break;
    }
    const v = view(row);
    if (!v.topic) {
      out.skipped.push({ id: v.id, source: v.source, why: 'not from a topic (webhook: use reconcile)' });
      continue;
    }
    if (!v.key) {
      out.skipped.push({ id: v.id, source: v.source, why: 'no stored key' });
      continue;
    }
    // Its envelope as it was (same idempotency key, same time), without the reply headers: its asker is long gone.
    await bus.send(v.topic, [{ key: v.key, value: v.payload }]);
    await db.execute('update dead_letters set replayed_at = now() where id = ?', [v.id]);
    out.replayed.push({ id: v.id, source: v.source, topic: v.topic, key: v.key });
  }
  return out;
}

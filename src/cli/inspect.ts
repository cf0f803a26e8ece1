// Shows one actor's state as its owner would have it: the stored snapshot (as of its partition
// offset), then the commands of that key the log holds past the snapshot, run through the kind's
// pure decider (with the inbox's answers for commands already applied), without committing. A kind
// whose rows hold its state (no snapshots) is replayed from the whole log and shown beside the
// state its rows give (`rows`): the two agree.
import { partitionFor } from '../runtime/partitioner.ts';
import { step } from '../runtime/actor-cell.ts';
import { commandsOf } from '../runtime/envelope.ts';
import type { Envelope } from '../runtime/types.ts';
import { scan } from './replay.ts';
import { OpsError, type OpsContext } from './context.ts';

export interface InspectResult {
  kind: string;
  key: string;
  topic: string;
  partition: number;
  snapshot: { next_offset: string; updated_at: string; state: unknown } | null;
  /** A kind whose rows hold its state: that state as the rows give it (null: no rows yet). */
  rows?: unknown;
  committed_offset: string | null;
  log_end: string;
  replayed: { offset: string; command: string; answered_from_inbox: boolean; events: string[]; reply?: unknown; error?: string }[];
  state: unknown;
}

export async function inspectActor(
  ctx: OpsContext,
  kindName: string,
  key: string,
  o: { signal: AbortSignal; quiet?: boolean },
): Promise<InspectResult> {
  const entry = ctx.kinds.find((k) => k.kind.name === kindName);
  if (!entry) throw new OpsError(`unknown actor kind ${kindName} (one of ${ctx.kinds.map((k) => k.kind.name).join(', ')})`);
  if (!entry.owns(key)) throw new OpsError(`${key} is not a key of a ${kindName} actor`);
  const kind = entry.kind;
  const bus = ctx.bus();
  const offsets = await bus.offsets(kind.topic).catch(() => {
    throw new OpsError(`topic ${kind.topic} does not exist`);
  });
  const partition = partitionFor(key, offsets.length);
  const end = offsets.find((x) => x.partition === partition)!.high;
  const rows = await ctx
    .db()
    .execute('select state, next_offset::text as next_offset, updated_at from actor_snapshots where kind = ? and key = ?', [
      kind.name,
      key,
    ]);
  const snap = rows[0]
    ? {
        next_offset: rows[0].next_offset,
        updated_at: new Date(rows[0].updated_at).toISOString(),
        state: typeof rows[0].state === 'string' ? JSON.parse(rows[0].state) : rows[0].state,
      }
    : null;
  const committed = await ctx.store.loadOffset(ctx.groupId, kind.topic, partition);
  let state: unknown = snap ? kind.fromSnapshot(snap.state) : kind.decider.initial(key);
  const mine: { offset: bigint; value: string }[] = [];
  const ok = await scan(
    ctx,
    [{ topic: kind.topic, partition, end: end.toString(), from: snap ? BigInt(snap.next_offset) : undefined }],
    { signal: o.signal, quiet: o.quiet },
    `inspect ${kind.name}/${key}`,
    (r) => {
      let commands: ReturnType<typeof commandsOf>;
      try {
        commands = commandsOf(r.key, r.value);
      } catch {
        if (r.key === key) mine.push({ offset: r.offset, value: r.value });
        return;
      }
      for (const c of commands) if (c.key === key) mine.push({ offset: r.offset, value: c.bulk ? JSON.stringify(c.envelope) : r.value });
    },
  );
  if (!ok) throw new OpsError('interrupted', 130);
  const replayed: InspectResult['replayed'] = [];
  const seenIds = new Set<string>();
  const envs = mine.map((m) => {
    try {
      return JSON.parse(m.value) as Envelope;
    } catch {
      return null;
    }
  });
  const ids = [...new Set(envs.map((e) => e?.id).filter((x): x is string => !!x))];
  const inbox = await ctx.store.findInbox(ids);
  // As a replay decides: an id in the inbox was applied by the record it names (run that one
  // again) and answered for every other; a record whose decider threw was dead-lettered.
  const facts = await ctx.store.replayFacts(
    kind.topic,
    partition,
    ids,
    mine.map((m) => m.offset),
  );
  mine.forEach((m, i) => {
    const env = envs[i];
    let cmd: any;
    try {
      if (!env || env.v !== 1) throw new Error('not a v1 envelope');
      cmd = kind.parse(env.cmd, env);
    } catch (e) {
      replayed.push({
        offset: m.offset.toString(),
        command: '?',
        answered_from_inbox: false,
        events: [],
        error: `bad command: ${(e as Error).message}`,
      });
      return;
    }
    const command = String(cmd?.type ?? '?');
    if (facts.poisoned.has(m.offset)) {
      replayed.push({
        offset: m.offset.toString(),
        command,
        answered_from_inbox: false,
        events: [],
        error: 'dead-lettered (unparsable, its decider threw or its commit failed)',
      });
      return;
    }
    const appliedHere = !!env!.id && facts.appliedAt.get(env!.id) === m.offset;
    if (env!.id && !appliedHere && (inbox.has(env!.id) || seenIds.has(env!.id))) {
      replayed.push({ offset: m.offset.toString(), command, answered_from_inbox: true, events: [], reply: inbox.get(env!.id) });
      return;
    }
    const r = step(kind, state, cmd);
    if (r.error) {
      replayed.push({ offset: m.offset.toString(), command, answered_from_inbox: false, events: [], error: r.error.message });
      return;
    }
    if (env!.id && r.decision!.final !== false) seenIds.add(env!.id);
    state = r.state;
    replayed.push({
      offset: m.offset.toString(),
      command,
      answered_from_inbox: false,
      events: r.decision!.events.map((e: any) => String(e?.type ?? '?')),
      reply: r.decision!.reply,
    });
  });
  return {
    kind: kind.name,
    key,
    topic: kind.topic,
    partition,
    snapshot: snap,
    ...(kind.rows ? { rows: ((await kind.rows.load(ctx.store.reader, [key])).get(key) ?? null) as unknown } : {}),
    committed_offset: committed?.toString() ?? null,
    log_end: end.toString(),
    replayed,
    state: kind.toSnapshot(state),
  };
}

// Processes one partition: skip what the store already reflects, run each command through its
// key's actor, then commit effects + snapshots + answers + the next offset in one transaction,
// and only then send the replies. Any doubt (fenced, failed commit, gap) drops the partition's
// actors and resumes from what the store holds: snapshot + replay.
import { PartitionActors, type StepResult } from './actor-cell.ts';
import { toJson } from './json.ts';
import type { DeadLetterRow, InboxRow, RuntimeStore, SnapshotRow } from './store-port.ts';
import type { ActorKind, Applied, Batch, BatchOutcome, Bus, Envelope, InRecord, OutRecord } from './types.ts';

export interface WorkerDeps {
  bus: Bus;
  store: RuntimeStore;
  groupId: string;
  owner: string;
  system: any;
  kindFor(topic: string, key: string): ActorKind | undefined;
  log: { info(o: object, m?: string): void; warn(o: object, m?: string): void; error(o: object, m?: string): void };
  metrics?: {
    batch(topic: string, records: number, ms: number): void; resync(topic: string, partition: number): void;
    /** after a commit that wrote `n` snapshots (metrics: snapshot age) */
    snapshots?(topic: string, partition: number, n: number): void;
    deadLetters?(topic: string, n: number): void;
  };
  /** After a batch committed; `effects` counts the statements its projections wrote (outbox, ledger: relays to wake). */
  onCommitted?(topic: string, partition: number, effects: number): void;
  /** Live actors per partition (default MAX_LIVE_ACTORS). */
  maxLiveActors?: number;
  /** Fault injection for failover tests: called around the commit of every batch. */
  faults?: { beforeCommit?(): void; afterCommit?(): void };
}

/** Live actors a partition keeps in memory; the least recently used beyond this are stopped after a commit. */
export const MAX_LIVE_ACTORS = 2_000;

export const REPLY_TO = 'reply-to';
export const CORRELATION = 'corr';

export interface ReplyMessage { corr: string; reply: unknown; error?: string }

interface Item {
  record: InRecord;
  envelope?: Envelope;
  kind?: ActorKind;
  command?: unknown;
  reply?: unknown;
  error?: string;
  /** An earlier command of the same batch with the same idempotency key: answered like it. */
  dupOf?: Item;
}

export class PartitionWorker {
  private expectedNext: bigint | null = null;
  private soughtTo: bigint | null = null;
  private actors: PartitionActors | null = null;

  constructor(private deps: WorkerDeps, readonly topic: string, readonly partition: number) {}

  /** Forget everything in memory: the next batch starts from the store. */
  reset(): void {
    this.actors?.drop();
    this.actors = null;
    this.expectedNext = null;
  }

  stateOf(key: string): unknown {
    return this.actors?.stateOf(key);
  }

  /** The next offset this worker will process (null until it has loaded from the store). */
  get position(): bigint | null {
    return this.expectedNext;
  }

  actorCounts(into: Record<string, number> = {}): Record<string, number> {
    return this.actors?.countsByKind(into) ?? into;
  }

  async handle(batch: Batch): Promise<BatchOutcome> {
    try {
      return await this.process(batch);
    } catch (err) {
      this.reset(); // nothing half-done stays in memory: the batch is redelivered against the store
      throw err;
    }
  }

  private async process(batch: Batch): Promise<BatchOutcome> {
    const started = Date.now();
    const d = this.deps;
    if (this.expectedNext === null) {
      const stored = d.bus.durable ? await d.store.loadOffset(d.groupId, this.topic, this.partition) : null;
      if (stored === null) {
        await d.store.resetOffset(d.groupId, this.topic, this.partition, batch.records[0].offset, d.owner);
        this.expectedNext = batch.records[0].offset;
      } else {
        this.expectedNext = stored;
      }
      this.actors = new PartitionActors(d.system, `${this.topic}-${this.partition}`);
      d.metrics?.resync(this.topic, this.partition);
    }
    const expected = this.expectedNext;
    const records = batch.records.filter((r) => r.offset >= expected);
    if (!records.length) return { done: true };
    if (records[0].offset > expected) {
      if (this.soughtTo !== expected) { this.soughtTo = expected; return { seek: expected }; }
      // Sought once and still past it: the log no longer holds those records (retention). Go on
      // from what exists, fencing on the stored offset as ever, and say so loudly.
      d.log.error({ topic: this.topic, partition: this.partition, from: String(expected), to: String(records[0].offset) }, 'records gone from the log before they were processed');
    }

    const items = records.map((record) => this.parse(record));
    await this.answerFromInbox(items);
    markDuplicates(items);
    await this.ensureActors(items);
    const results = await this.step(items);

    // A decider that throws may have left its (mutable) state half-changed: nothing of this batch
    // from that command on is trusted. Commit what came before it, dead-letter it alone, go on after.
    const bad = results.findIndex((r) => r?.error);
    if (bad >= 0) return this.poisoned(batch, records, bad, results[bad]!.error!);

    const applied = new Map<ActorKind, Applied<unknown, unknown, unknown>[]>();
    const dirty = new Map<string, { kind: ActorKind; key: string }>();
    const inbox: InboxRow[] = [];
    const deadLetters: DeadLetterRow[] = [];
    items.forEach((it, i) => {
      const r = results[i];
      if (it.error) deadLetters.push({ source: `${this.topic}/${this.partition}@${it.record.offset}`, reason: it.error, payload: it.record.value });
      if (!r) return;
      const decision = r.decision!;
      const id = it.envelope!.id;
      it.reply = decision.reply;
      if (decision.final !== false && id) inbox.push({ key: id, reply: decision.reply });
      if (decision.events.length) {
        const list = applied.get(it.kind!) ?? [];
        list.push({ key: it.record.key, command: it.command, envelope: it.envelope!, events: decision.events, state: r.state });
        applied.set(it.kind!, list);
        dirty.set(`${it.kind!.name}\u0000${it.record.key}`, { kind: it.kind!, key: it.record.key });
      }
    });

    for (const it of items) if (it.dupOf) { it.reply = it.dupOf.reply; it.error = it.dupOf.error; }
    const next = records[records.length - 1].offset + 1n;
    const snapshots: SnapshotRow[] = [...dirty.values()].map(({ kind, key }) => ({ kind: kind.name, key, state: kind.toSnapshot(this.actors!.stateOf(key)) }));
    let committed = false;
    let effects = 0;
    d.faults?.beforeCommit?.();
    try {
      committed = await d.store.commit({
        groupId: d.groupId, topic: this.topic, partition: this.partition, expectedNext: expected, next, owner: d.owner,
        snapshots, inbox, deadLetters,
        effects: async (tx) => {
          const counted = { execute: (sql: string, params?: unknown[]) => { effects++; return tx.execute(sql, params); } };
          for (const [kind, list] of applied) await kind.project(counted, list);
        },
      });
    } catch (err) {
      d.log.error({ err, topic: this.topic, partition: this.partition }, 'commit failed; resuming from the store');
    }
    if (!committed) {
      this.reset();
      return { seek: records[0].offset };
    }
    this.expectedNext = next;
    this.actors!.passivate(d.maxLiveActors ?? MAX_LIVE_ACTORS);
    d.faults?.afterCommit?.();
    if (effects) d.onCommitted?.(this.topic, this.partition, effects);
    await this.sendReplies(items);
    d.metrics?.batch(this.topic, records.length, Date.now() - started);
    if (snapshots.length) d.metrics?.snapshots?.(this.topic, this.partition, snapshots.length);
    if (deadLetters.length) d.metrics?.deadLetters?.(this.topic, deadLetters.length);
    return { done: true };
  }

  private async poisoned(batch: Batch, records: InRecord[], bad: number, err: Error): Promise<BatchOutcome> {
    const d = this.deps;
    this.reset();
    const at = records[bad];
    if (bad > 0) {
      await this.process({ ...batch, records: records.slice(0, bad) });
      return { seek: at.offset };
    }
    d.log.error({ err, key: at.key, topic: this.topic, partition: this.partition, offset: String(at.offset) }, 'decider threw; command dead-lettered');
    const stored = d.bus.durable ? await d.store.loadOffset(d.groupId, this.topic, this.partition) : at.offset;
    const ok = await d.store.commit({
      groupId: d.groupId, topic: this.topic, partition: this.partition, expectedNext: stored ?? at.offset, next: at.offset + 1n, owner: d.owner,
      snapshots: [], inbox: [], deadLetters: [{ source: `${this.topic}/${this.partition}@${at.offset}`, reason: `decider failed: ${err.message}`, payload: at.value }],
      effects: async () => undefined,
    });
    if (ok) d.metrics?.deadLetters?.(this.topic, 1);
    const to = at.headers?.[REPLY_TO];
    const corr = at.headers?.[CORRELATION];
    if (ok && to && corr) await d.bus.send(to, [{ key: corr, value: toJson({ corr, reply: null, error: `decider failed: ${err.message}` } satisfies ReplyMessage) }]).catch(() => undefined);
    return { seek: ok ? at.offset + 1n : at.offset };
  }

  /** Runs the batch's commands through their actors: one mailbox turn per key, keys in parallel, each key's commands in order. */
  private async step(items: Item[]): Promise<(StepResult | null)[]> {
    const byKey = new Map<string, number[]>();
    items.forEach((it, i) => {
      if (!it.kind || it.reply !== undefined || it.dupOf) return;
      const list = byKey.get(it.record.key);
      if (list) list.push(i); else byKey.set(it.record.key, [i]);
    });
    const results: (StepResult | null)[] = items.map(() => null);
    await Promise.all([...byKey].map(async ([key, idx]) => {
      const out = await this.actors!.sendMany(key, idx.map((i) => ({ envelope: items[i].envelope!, command: items[i].command })));
      idx.forEach((i, j) => { results[i] = out[j]; });
    }));
    return results;
  }

  private parse(record: InRecord): Item {
    const it: Item = { record };
    try {
      const envelope = JSON.parse(record.value) as Envelope;
      if (!envelope || envelope.v !== 1 || typeof envelope.at !== 'number') throw new Error('not a v1 envelope');
      const kind = this.deps.kindFor(this.topic, record.key);
      if (!kind) throw new Error(`no actor kind for key ${record.key}`);
      it.envelope = envelope;
      it.kind = kind;
      it.command = kind.parse(envelope.cmd, envelope);
    } catch (e) {
      it.kind = undefined;
      it.error = `bad command: ${(e as Error).message}`;
    }
    return it;
  }

  private async answerFromInbox(items: Item[]) {
    const ids = [...new Set(items.filter((it) => it.kind && it.envelope?.id).map((it) => it.envelope!.id!))];
    if (!ids.length) return;
    const found = await this.deps.store.findInbox(ids);
    for (const it of items) {
      const id = it.envelope?.id;
      if (it.kind && id && found.has(id)) it.reply = found.get(id);
    }
  }

  private async ensureActors(items: Item[]) {
    const missing = new Map<ActorKind, Set<string>>();
    for (const it of items) {
      if (!it.kind || it.reply !== undefined || this.actors!.has(it.record.key)) continue;
      const set = missing.get(it.kind) ?? new Set<string>();
      set.add(it.record.key);
      missing.set(it.kind, set);
    }
    for (const [kind, keys] of missing) {
      const snaps = await this.deps.store.loadSnapshots(kind.name, [...keys]);
      for (const key of keys) {
        const snap = snaps.get(key);
        this.actors!.spawn(key, kind, snap === undefined ? kind.decider.initial(key) : kind.fromSnapshot(snap));
      }
    }
  }

  private async sendReplies(items: Item[]) {
    const byTopic = new Map<string, OutRecord[]>();
    for (const it of items) {
      const to = it.record.headers?.[REPLY_TO];
      const corr = it.record.headers?.[CORRELATION];
      if (!to || !corr) continue;
      const msg: ReplyMessage = it.error ? { corr, reply: null, error: it.error } : { corr, reply: it.reply };
      const list = byTopic.get(to) ?? [];
      list.push({ key: corr, value: toJson(msg) });
      byTopic.set(to, list);
    }
    await Promise.all([...byTopic].map(([topic, recs]) => this.deps.bus.send(topic, recs).catch((err) => {
      this.deps.log.warn({ err, topic }, 'reply not delivered; the asker will retry');
    })));
  }
}

function markDuplicates(items: Item[]) {
  const first = new Map<string, Item>();
  for (const it of items) {
    const id = it.envelope?.id;
    if (!it.kind || !id || it.reply !== undefined) continue;
    const f = first.get(id);
    if (f) it.dupOf = f;
    else first.set(id, it);
  }
}

// The runtime's store on MikroORM: offsets (fenced), actor snapshots, the command inbox and dead
// letters, committed in the same transaction as a batch's effects.
import {
  INBOX_SEEN,
  InboxSeen,
  type CommitArgs,
  type ForwardRow,
  type DeadLetterRow,
  type ReplayFacts,
  type RuntimeStore,
  type StoredPosition,
  type StoredSnapshot,
} from '../runtime/store-port.ts';
import type { ExecuteOptions, StoreTx } from '../runtime/types.ts';
import { pgliteEngineOf, type Orm } from './orm.ts';
import { bigJson, toJson } from '../runtime/json.ts';
import { clip } from '../runtime/failures.ts';
import { formatQuery } from './sql-format.ts';
import { readRows, runScript } from './pglite-script.ts';
import { isUniqueViolation } from './sql-errors.ts';

type Em = { execute(sql: string, params?: unknown[], method?: 'all' | 'get' | 'run'): Promise<any> };

export function txOf(em: Em): StoreTx {
  return { execute: (sql, params) => em.execute(sql, params as unknown[]) };
}

export class SqlRuntimeStore implements RuntimeStore {
  /**
   * How a commit's statements run as one transaction: PostgreSQL runs a multi-statement simple query
   * atomically, and so does PGlite's `exec` (its ORM driver takes one statement per call, a round
   * trip through the WASM engine each: a commit of eight statements cost eight).
   */
  private script: (sql: string) => Promise<unknown>;

  /** Group commit: commits waiting for a turn, and how many group transactions are running. */
  private waiting: PendingCommit[] = [];
  private inFlight = 0;

  /**
   * `commitsInFlight`: how many transactions this node's partition commits run at once on
   * PostgreSQL. Commits that arrive while that many are running wait, and go together as one
   * transaction when a turn frees: fewer, larger transactions, and fewer backends writing the same
   * index pages at once. A group that fails (one member fenced, or any error) was rolled back whole
   * and each member then commits alone, so a member's outcome never depends on another's.
   */
  constructor(
    private orm: Orm,
    private commitsInFlight = 2,
  ) {
    // A group starts on the next turn of the event loop, with every commit the partitions issued in
    // this one: partitions of one fetch (or of one delivery's bulk records) commit together. On
    // PostgreSQL, starting the first at once left the others of its turn for a second transaction:
    // 5.6–6.1 transactions per 250-event webhook delivery instead of 3.5–3.9, and the in-process
    // ingest bench's machine CPU per event 323–330 µs instead of 209–308 (see `pump`).
    const engine = pgliteEngineOf(orm);
    if (engine) {
      // The engine itself, under the locks `exec` takes (it waits for any transaction open on it),
      // the text run as one implicit transaction (an error rolls all of it back); no result set is
      // built, and a read is one trip through the engine (src/store/pglite-script.ts).
      this.script = async (sql) => runScript(await engine, sql);
      this.rows = async (sql) => readRows(await engine, sql, []);
      // One engine, one transaction at a time, run synchronously (a write transaction's own cost in
      // PGlite is several statements'): one group at a time.
      this.commitsInFlight = 1;
    } else {
      this.script = (sql) => this.run(sql);
      this.rows = (sql) => (this.orm.em.getDriver() as any).execute(sql, []);
    }
  }

  /** A statement's rows (its parameters already inlined). */
  private rows: (sql: string) => Promise<any[]>;

  readonly reader: StoreTx = { execute: (sql, params) => this.run(sql, params as unknown[]) };

  /** A statement outside any transaction, straight to the driver (no entity manager per call). */
  private run(sql: string, params: unknown[] = []): Promise<any> {
    // Inlined by formatQuery (MikroORM's escaping builds strings a character at a time).
    return this.rows(params.length ? formatQuery(this.orm.em.getPlatform() as any, sql, params) : sql);
  }

  async loadOffset(groupId: string, topic: string, partition: number): Promise<bigint | null> {
    const rows = await this.run('select next_offset::text as n from consumer_offsets where group_id = ? and topic = ? and partition = ?', [
      groupId,
      topic,
      partition,
    ]);
    return rows.length ? BigInt(rows[0].n) : null;
  }

  async loadPosition(groupId: string, topic: string, partition: number): Promise<StoredPosition | null> {
    const rows = await this.run(
      'select next_offset::text as n, replay_from::text as r from consumer_offsets where group_id = ? and topic = ? and partition = ?',
      [groupId, topic, partition],
    );
    if (!rows.length) return null;
    const next = BigInt(rows[0].n);
    const from = rows[0].r === null || rows[0].r === undefined ? next : BigInt(rows[0].r);
    return { next, replayFrom: from < next ? from : next };
  }

  async resetOffset(groupId: string, topic: string, partition: number, next: bigint, owner: string): Promise<void> {
    await this.run(
      `insert into consumer_offsets (group_id, topic, partition, next_offset, replay_from, owner, updated_at) values (?, ?, ?, ?, null, ?, now())
       on conflict (group_id, topic, partition) do update set next_offset = excluded.next_offset, replay_from = null, owner = excluded.owner, updated_at = now()`,
      [groupId, topic, partition, next.toString(), owner],
    );
  }

  async loadSnapshots(kind: string, keys: string[]): Promise<Map<string, StoredSnapshot>> {
    const out = new Map<string, StoredSnapshot>();
    if (!keys.length) return out;
    // One primary-key lookup per key, whatever the planner's statistics say (`limit 1` keeps the
    // lateral lookup from being flattened into a join): with `key in (…)`, a table that grew since
    // its last ANALYZE was scanned whole for every batch.
    const rows = await this.run(
      `select s.key, s.state, s.next_offset::text as n from unnest(array[?]::text[]) as k(key)
       cross join lateral (select key, state, next_offset from actor_snapshots where kind = ? and key = k.key limit 1) s`,
      [keys, kind],
    );
    for (const r of rows) out.set(r.key, { state: typeof r.state === 'string' ? JSON.parse(r.state) : r.state, next: BigInt(r.n) });
    return out;
  }

  async loadJournal(kind: string, keys: string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (!keys.length) return out;
    const rows = await this.run('select key, envelope from actor_journal where kind = ? and key in (?) order by id', [kind, keys]);
    for (const r of rows) {
      const list = out.get(r.key);
      if (list) list.push(r.envelope);
      else out.set(r.key, [r.envelope]);
    }
    return out;
  }

  async journaledKeys(topic: string, partition: number): Promise<{ kind: string; key: string }[]> {
    return this.run('select distinct kind, key from actor_journal where topic = ? and partition = ?', [topic, partition]);
  }

  async replayFacts(topic: string, partition: number, ids: string[], offsets: bigint[]): Promise<ReplayFacts> {
    const appliedAt = new Map<string, bigint | null>();
    const poisoned = new Set<bigint>();
    if (ids.length) {
      const rows = await this.run(
        'select key, source_topic as t, source_partition as p, source_offset::text as o from command_inbox where key in (?)',
        [ids],
      );
      for (const r of rows) appliedAt.set(r.key, r.t === topic && Number(r.p) === partition && r.o !== null ? BigInt(r.o) : null);
    }
    if (offsets.length) {
      const sources = offsets.map((o) => `${topic}/${partition}@${o}`);
      // Any runtime dead letter of a record means it was never applied (unparsable, its decider
      // threw, its commit failed on its data); replayed by an operator, it came back as a new record.
      const rows = await this.run('select source from dead_letters where source in (?)', [sources]);
      for (const r of rows) poisoned.add(BigInt(String(r.source).slice(String(r.source).lastIndexOf('@') + 1)));
    }
    return { appliedAt, poisoned };
  }

  async findInbox(keys: string[]): Promise<Map<string, unknown>> {
    const out = new Map<string, unknown>();
    if (!keys.length) return out;
    const rows = await this.run('select key, reply from command_inbox where key in (?)', [keys]);
    for (const r of rows) out.set(r.key, typeof r.reply === 'string' ? JSON.parse(r.reply) : r.reply);
    return out;
  }

  /** Forwarded commands sent by their workers: their outbox rows are deleted together, a moment later. */
  private sent: string[] = [];
  private sentTimer: ReturnType<typeof setTimeout> | null = null;

  forwarded(msgKeys: string[]): void {
    this.sent.push(...msgKeys);
    if (this.sentTimer) return;
    this.sentTimer = setTimeout(() => {
      this.sentTimer = null;
      const keys = this.sent.splice(0);
      // Lost on failure: the relay then sends those rows when they are due (their receivers answer a repeat from the inbox).
      for (let i = 0; i < keys.length; i += 5_000)
        this.run('delete from outbox where msg_key in (?)', [keys.slice(i, i + 5_000)]).catch(() => undefined);
    }, FORWARD_DELETE_MS);
    this.sentTimer.unref?.();
  }

  async deadLetter(row: DeadLetterRow): Promise<void> {
    await this.run(INSERT_DEAD_LETTER, [
      clip(row.source),
      clip(row.reason),
      clip(row.payload),
      row.key === undefined ? null : clip(row.key),
    ]);
  }

  /**
   * One round trip: every statement of the batch is formatted and sent as a single multi-statement
   * query, which PostgreSQL runs as one implicit transaction (with other partitions' commits that
   * waited for the same turn: see the constructor). The first statement fences: it fails on FENCED
   * unless this worker's expected offset is still the stored one.
   */
  async commit(a: CommitArgs): Promise<boolean> {
    const platform = this.orm.em.getPlatform() as any;
    // The effects' statements, in order (dead letters last): those over a JSON array of rows
    // (see Rows) kept unformatted, so that a group can merge them with other members'.
    const effects: Effect[] = [];
    const push = (sql: string, params: unknown[] = [], opts?: ExecuteOptions) => {
      const json = params.length === 1 && typeof params[0] === 'string' && params[0].startsWith('[') ? params[0] : null;
      const plain = opts?.usuallyNew ? plainInsert(sql) : undefined;
      if (json !== null && mergeable(sql)) effects.push(plain ? { sql, json, plain } : { sql, json });
      // The plain variant of a formatted statement is formatted only if it is tried.
      else
        effects.push(
          plain
            ? { text: formatQuery(platform, sql, params), plain: () => formatQuery(platform, plain, params) }
            : { text: formatQuery(platform, sql, params), call: isCall(sql) },
        );
    };
    const move: FenceMove = {
      g: a.groupId,
      t: a.topic,
      p: a.partition,
      next: a.next.toString(),
      from: a.replayFrom < a.next ? a.replayFrom.toString() : null,
      owner: a.owner,
      expected: a.expectedNext.toString(),
    };
    // The effects first (a projection may add to the forwards: StoreTx.send); the bookkeeping goes before them.
    await a.effects({
      execute: async (sql, params, opts) => {
        push(sql, (params as unknown[] | undefined) ?? [], opts);
        return [];
      },
    });
    for (const d of a.deadLetters)
      push(INSERT_DEAD_LETTER, [clip(d.source), clip(d.reason), clip(d.payload), d.key === undefined ? null : clip(d.key)]);
    const book = bookOf(a, move);
    // Its shape: the statements of its effects when every one is a rows statement (such members
    // have their effects merged: see combined), else null.
    const shape = effects.every((e) => 'sql' in e) ? effects.map((e) => (e as Rows).sql).join('\u0000') : null;
    // Formatted only if it commits alone (a group formats its members' parts together).
    const text = (plain: boolean) => {
      const script = new Script();
      script.add(bookkeepingOf(platform, [book]), true);
      for (const e of effects) script.add(formatted(platform, e, plain), isCallEffect(e, plain));
      return script.text();
    };
    const chars = effects.reduce((n, e) => n + ('text' in e ? e.text.length : e.sql.length + e.json.length), book.chars);
    const plain = effects.some((e) => e.plain !== undefined);
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({ text, chars, book, effects, shape, plain, resolve, reject });
      this.pump();
    });
  }

  /**
   * A group as one transaction: one bookkeeping call for every member (`runtime_commit_batch`: the
   * fences, then all members' journal, snapshot, inbox and forward rows), then the members'
   * effects. Members made of rows statements only have them merged (mergeOrder): one statement
   * over the rows of every member whose next statement it is, each member's own order kept. Members
   * hold different partitions, hence different keys and rows (a market's orders and ledger, a
   * parlay's legs), so the merged statements do what the members' own would have done one after
   * the other.
   */
  private combined(group: PendingCommit[], plain: boolean): string {
    const platform = this.orm.em.getPlatform() as any;
    // The script's pieces, joined once at the end: a merged statement's rows are never copied into
    // a string of their own first (a turn's rows are hundreds of KB: every copy was a large young object).
    const script = new Script();
    script.add(
      bookkeepingOf(
        platform,
        group.map((g) => g.book),
      ),
      true,
    );
    const lists: Rows[][] = [];
    for (const g of group) {
      if (g.shape === null) for (const e of g.effects) script.add(formatted(platform, e, plain), isCallEffect(e, plain));
      else if (g.shape.length) lists.push(g.effects as Rows[]);
    }
    for (const step of mergeOrder(lists)) {
      const r = step[0];
      const sql = (plain && r.plain) || r.sql;
      mergedRows(
        platform,
        script.start(isCall(sql)) ? sql.slice(SELECT.length) : sql,
        step.map((x) => x.json),
        script.out,
      );
    }
    return script.text();
  }

  /** A group starts on the next turn of the event loop (see the constructor). */
  private pumpSoon = false;

  private pump(): void {
    if (this.pumpSoon || this.inFlight >= this.commitsInFlight) return; // the running group's end pumps
    this.pumpSoon = true;
    setImmediate(() => {
      this.pumpSoon = false;
      this.pumpNow();
    });
  }

  /**
   * Starts group transactions while turns are free. What waits is shared among the free turns when
   * there is enough of it (a turn's commits of a 250-event webhook delivery are ~800 KB of SQL):
   * one transaction runs on one PostgreSQL backend, hence one core, and a single group left the
   * other turn idle behind it (in-process ingest: ~1 group in flight on average, each ~90 ms; two
   * halves in parallel, 0.60–0.63 → 0.66–0.68 of the floor). Small commits (an order's) stay
   * together: a transaction's own cost would dominate them. Each group takes at most GROUP_MAX_CHARS.
   */
  private pumpNow(): void {
    while (this.inFlight < this.commitsInFlight && this.waiting.length) {
      let total = 0;
      for (const w of this.waiting) total += w.chars;
      const share = Math.min(GROUP_MAX_CHARS, Math.max(SPLIT_MIN_CHARS, Math.ceil(total / (this.commitsInFlight - this.inFlight))));
      let take = 0;
      let chars = 0;
      while (take < this.waiting.length && (take === 0 || chars + this.waiting[take].chars <= share)) chars += this.waiting[take++].chars;
      const group = this.waiting.splice(0, take);
      this.inFlight++;
      void this.commitGroup(group).finally(() => {
        this.inFlight--;
        this.pumpNow();
      });
    }
  }

  private async commitGroup(group: PendingCommit[]): Promise<void> {
    if (group.length > 1) {
      try {
        // One simple query: PostgreSQL runs it as one transaction, all of it or none.
        await this.twice(
          (plain) => this.combined(group, plain),
          group.some((g) => g.plain),
        );
        for (const g of group) g.resolve(true);
        return;
      } catch {
        // rolled back whole: each member commits alone below
      }
    }
    for (const g of group) {
      try {
        await this.twice(g.text, g.plain);
        g.resolve(true);
      } catch (e) {
        if (isFenced(e)) g.resolve(false);
        else g.reject(isInboxSeen(e) ? new InboxSeen(e) : e);
      }
    }
  }

  /**
   * Runs `sql(true)`, its `usuallyNew` inserts plain; when one of them meets a row that exists (a
   * unique violation rolled it all back), runs `sql(false)`, every statement as written.
   */
  private async twice(sql: (plain: boolean) => string, plain: boolean): Promise<void> {
    if (!plain) return void (await this.script(sql(false)));
    try {
      await this.script(sql(true));
    } catch (e) {
      // An inbox key stored before fails the statements as written just the same.
      if (!isUniqueViolation(e) || isInboxSeen(e)) throw e;
      await this.script(sql(false));
    }
  }
}

interface PendingCommit {
  /** The commit's SQL alone (formatted when it commits alone), its `usuallyNew` inserts plain or not. */
  text(plain: boolean): string;
  /** It has `usuallyNew` inserts. */
  plain: boolean;
  /** About its SQL's length (the group bound). */
  chars: number;
  /** Its bookkeeping rows, for a group's one call. */
  book: Book;
  /** Its effects' statements. */
  effects: Effect[];
  /** Its rows statements, when it is made of them only (merged with other such members'); else null. */
  shape: string | null;
  resolve(ok: boolean): void;
  reject(e: unknown): void;
}

/**
 * A projection's statement over a JSON array of rows (its one parameter): an insert of
 * `jsonb_to_recordset(?::jsonb)` or `jsonb_array_elements(?::jsonb)`, or one of the functions that take such an array. The same
 * statement of several partitions' commits is one statement over all their rows (partitions hold
 * different keys, and each commit's statements keep their order).
 */
interface Rows {
  sql: string;
  json: string;
  /** `sql` as a plain insert, when it was executed `usuallyNew`. */
  plain?: string;
}

/** A statement of a commit's effects: a rows statement, or any other, formatted (and as a plain insert: `usuallyNew`). */
type Effect = Rows | { text: string; plain?: () => string; call?: boolean };

const SELECT = 'select ';
/** A statement that is one call of a function over its parameters (`select ledger_append(?::jsonb)`). */
const isCall = (sql: string) => /^select [a-z_][a-z0-9_]*\([?:a-z0-9_, ]*\)$/.test(sql);
const isCallEffect = (e: Effect, plain: boolean) => ('text' in e ? !!e.call && !(plain && e.plain) : isCall((plain && e.plain) || e.sql));

/**
 * A script's statements as pieces, joined once. A run of function calls is fused into one
 * statement, `select runtime_commit_batch(…), open_orders_upsert(…), ledger_append(…)`: PostgreSQL
 * parses, plans and starts every statement of a script on its own (PGlite ~40–60 µs each, an
 * order's commit three statements), while the calls of one select list still run one after the
 * other, in order, each seeing what the ones before wrote (they are volatile: every statement in
 * them takes a fresh snapshot), and any error still rolls the whole script back.
 */
class Script {
  readonly out: string[] = [];
  private lastCall = false;

  /** Begins the next statement; true when it is fused with the call before (its `select ` is then left out). */
  start(call: boolean): boolean {
    const fused = call && this.lastCall;
    if (this.out.length) this.out.push(fused ? ', ' : ';\n');
    this.lastCall = call;
    return fused;
  }

  add(statement: string, call: boolean): void {
    this.out.push(this.start(call) ? statement.slice(SELECT.length) : statement);
  }

  text(): string {
    return this.out.join('');
  }
}

const formatted = (platform: any, e: Effect, plain: boolean) =>
  'text' in e ? (plain && e.plain ? e.plain() : e.text) : formatQuery(platform, (plain && e.plain) || e.sql, [e.json]);

/**
 * A rows statement over the rows of several members (JSON arrays), pushed onto `out` as pieces: its
 * text before the placeholder, the quoted array, its text after. The members' arrays are pieces
 * too when none holds a quote or a backslash (what a literal must escape); otherwise the statement
 * is formatted as one string, as before.
 */
function mergedRows(platform: any, sql: string, jsons: string[], out: string[]): void {
  const rows = jsons.map((j) => j.slice(1, -1).trim()).filter((x) => x.length);
  const at = sql.indexOf('?');
  if (at < 0 || sql.indexOf('?', at + 1) >= 0 || sql[at - 1] === '\\' || rows.some((r) => r.includes("'") || r.includes('\\'))) {
    out.push(formatQuery(platform, sql, [`[${rows.join(',')}]`]));
    return;
  }
  out.push(sql.slice(0, at), "'[");
  rows.forEach((r, i) => out.push(i ? ',' : '', r));
  out.push("]'", sql.slice(at + 1));
}

/**
 * The rows statements of a group's members as merged steps, each one statement over the rows of
 * every member whose next statement it is: every member's statements keep their order (a member's
 * upsert of an order before its update), and members of different shapes share their statements
 * too (one with an upsert and a ledger line, one with an upsert, an update and a ledger line: three
 * statements, not five). A step takes a statement that no member has further on when there is one.
 * Merging by whole shapes only, an embedded group of 14 orders' commits ran 8–12 statements.
 */
export function mergeOrder<R extends { sql: string }>(lists: R[][]): R[][] {
  const at = lists.map(() => 0);
  let left = lists.reduce((n, l) => n + l.length, 0);
  const later = (sql: string) => lists.some((l, j) => l.findIndex((x, k) => k > at[j] && x.sql === sql) >= 0);
  const steps: R[][] = [];
  while (left > 0) {
    let pick: string | null = null;
    for (let i = 0; i < lists.length; i++) {
      if (at[i] >= lists[i].length) continue;
      const sql = lists[i][at[i]].sql;
      pick ??= sql;
      if (!later(sql)) {
        pick = sql;
        break;
      }
    }
    const step: R[] = [];
    for (let i = 0; i < lists.length; i++)
      if (at[i] < lists[i].length && lists[i][at[i]].sql === pick) {
        step.push(lists[i][at[i]++]);
        left--;
      }
    steps.push(step);
  }
  return steps;
}

/**
 * Calls of an upsert function and their plain-insert counterpart (Migration20261209100000): a
 * `usuallyNew` call goes as the plain one first, like an insert without its conflict clause.
 */
const PLAIN_CALLS = new Map([['select open_orders_upsert(?::jsonb)', 'select open_orders_insert(?::jsonb)']]);

/**
 * An `insert … on conflict [target] do nothing` without its conflict clause, or an upsert call's
 * plain counterpart (PLAIN_CALLS); undefined for any other statement.
 */
function plainInsert(sql: string): string | undefined {
  const call = PLAIN_CALLS.get(sql);
  if (call) return call;
  if (!/^\s*insert\b/i.test(sql)) return undefined;
  const m = /\s+on\s+conflict\b[^;]*?\bdo\s+nothing\s*$/i.exec(sql);
  return m ? sql.slice(0, m.index) : undefined;
}

/** The row sources of a rows statement: rows as JSON objects by column name, or as arrays of values by position. */
const ROWS_PARAMS = ['jsonb_to_recordset(?::jsonb)', 'jsonb_array_elements(?::jsonb)'];

/**
 * Functions over a JSON array of rows whose rows of different partitions never meet: an order and
 * its ledger lines belong to one market, hence to one partition (Migration20261129100000,
 * Migration20261201100000).
 */
const ROWS_FUNCTIONS = new Set([
  'select open_orders_upsert(?::jsonb)',
  'select open_orders_update(?::jsonb)',
  'select ledger_append(?::jsonb)',
]);

/**
 * Only inserts that update nothing merge (an update, or `do update`, of one row by two partitions'
 * rows must not become one statement), and the functions above.
 */
function mergeable(sql: string): boolean {
  return (
    ROWS_FUNCTIONS.has(sql) || (ROWS_PARAMS.some((p) => sql.includes(p)) && /^\s*insert\b/i.test(sql) && !/\bdo\s+update\b/i.test(sql))
  );
}

/** A forwarded command's outbox row is the relay's to send only after this: until then its worker sends it. */
const FORWARD_GRACE_SECONDS = 5;
/** Sent forwards' rows are deleted in one statement at most this often. */
const FORWARD_DELETE_MS = 250;

/** A group transaction's SQL stays under this many characters (a big book snapshot goes alone). */
const GROUP_MAX_CHARS = 4_000_000;
/** Commits waiting for a turn are shared among the free turns only in parts of at least this many characters. */
const SPLIT_MIN_CHARS = 200_000;

/**
 * The fence of a commit (its first statement) failed its cast on this marker: another owner moved
 * the partition on. (A marker, not a division by zero: a projection's own division by zero is a
 * poison record, not a fence.)
 */
/** What `runtime_commit_batch` raises when a partition moved on (the same text in Migration20261208100000). */
const FENCED = 'fenced: the partition moved on';

/** One partition's offset move: from `expected` to `next`, by `owner`. */
interface FenceMove {
  g: string;
  t: string;
  p: number;
  next: string;
  from: string | null;
  owner: string;
  expected: string;
}

/**
 * A commit's bookkeeping: its offset move and the runtime's own rows (journal, snapshots, inbox,
 * forwards), each list as the body of a JSON array whose rows carry their topic and partition, so
 * that a group's lists are their members' joined.
 */
interface Book {
  move: string;
  unjournal: string;
  journal: string;
  snapshots: string;
  inbox: string;
  forwards: string;
  chars: number;
}

function bookOf(a: CommitArgs, move: FenceMove): Book {
  const body = <T>(list: T[] | undefined, f: (x: T, i: number) => unknown, json = toJson) =>
    list?.length ? json(list.map(f)).slice(1, -1) : '';
  const t = a.topic;
  const p = a.partition;
  const b = {
    move: toJson(move),
    unjournal: a.journal ? body(a.snapshots, (x) => ({ kind: x.kind, key: x.key })) : '',
    journal: body(a.journal, (j, o) => ({ ...j, t, p, o })),
    snapshots: body(a.snapshots, (x) => ({ kind: x.kind, key: x.key, state: x.state, t, p, next: a.next.toString() })),
    inbox: body(a.inbox, (r) => ({ key: r.key, reply: r.reply, t, p, o: r.offset.toString() }), bigJson), // answers hold amounts
    forwards: body(a.forwards, (f: ForwardRow) => ({ topic: f.topic, key: f.key, value: f.value, headers: f.headers, msg_key: f.msgKey })),
    chars: 0,
  };
  b.chars = b.move.length + b.unjournal.length + b.journal.length + b.snapshots.length + b.inbox.length + b.forwards.length + 120;
  return b;
}

/**
 * The first statement of a commit or of a group: one call of `runtime_commit_batch` (migration
 * Migration20261208100000; `runtime_commit_group` of Migration20261130110000 with plain inbox
 * inserts), whose statements are planned once per connection. It fails on FENCED if a member's
 * partition moved on (checked first), else on the inbox's primary key if a command was applied
 * before; the journal lines of snapshotted actors are deleted before the new ones are added.
 */
function bookkeepingOf(platform: any, books: Book[]): string {
  const list = (k: Exclude<keyof Book, 'chars' | 'move'>) => {
    const parts = books.map((b) => b[k]).filter((x) => x.length);
    return parts.length ? `[${parts.join(',')}]` : null;
  };
  return formatQuery(platform, 'select runtime_commit_batch(?::jsonb, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?)', [
    `[${books.map((b) => b.move).join(',')}]`,
    books.length,
    list('unjournal'),
    list('journal'),
    list('snapshots'),
    list('inbox'),
    list('forwards'),
    FORWARD_GRACE_SECONDS,
  ]);
}

function isFenced(e: any): boolean {
  return String(e?.message).includes(FENCED);
}

/** A commit refused for an inbox key stored before: the primary key's unique_violation (`runtime_commit_batch`), or the text `runtime_commit_group` raised. */
function isInboxSeen(e: any): boolean {
  const message = String(e?.message);
  return (isUniqueViolation(e) && message.includes('command_inbox_pkey')) || message.includes(INBOX_SEEN);
}

/** A dead letter's text without NUL bytes (PostgreSQL's text refuses them: the dead letter itself would fail). */
const INSERT_DEAD_LETTER =
  'insert into dead_letters (source, reason, payload, record_key, created_at) values (?, ?, ?, ?, now()) on conflict (source) do nothing';

// PGlite runs PostgreSQL as one backend with no background workers: no autovacuum and no
// checkpointer. Without them the embedded node's tables that churn (journal lines deleted at each
// actor checkpoint, inbox rows pruned, outbox rows deleted once sent, snapshots and offsets
// rewritten every batch) never have their dead rows reclaimed: every insert goes to a new page at
// the end of its table, the data directory grows without bound (about 1.6 KB per order in
// `actor_journal` alone), and an index scan walks ever more dead entries. WAL is only checkpointed
// once it reaches `max_wal_size` (1 GB): then in one go, on the event loop, and a restart after a
// crash replays all of it. Measured on PGlite with a journal-like churn (5 rows of 1 KB inserted per
// transaction, older ones deleted): without vacuum 940 → 146 transactions/s within 50 s and the
// table at 168 MB; vacuumed every 200 transactions, a flat 1,350/s at 23 MB.
//
// This does their work on the engine itself, between commits (the engine runs one statement at a
// time: a pass holds it for as long as it runs, a few ms when passes are frequent). Each pass is
// driven by how much WAL was written since the last: past `vacuumWalBytes` (or any at all after
// `idleVacuumMs`), the churning tables are vacuumed; past `checkpointWalBytes` since the last
// checkpoint's redo point, a CHECKPOINT bounds the WAL kept and what a restart replays. Every
// `fullVacuumMs` with writes, the whole database is vacuumed (tables written rarely, catalogs).
//
// A table under `MIN_VACUUM_PAGES` is never vacuumed. PostgreSQL's planner takes a table that was
// never vacuumed (or analyzed) to be at least 10 pages; once vacuumed, it believes the row count
// the vacuum saw. A vacuum of an empty table tells it "empty", and a plan made then (a PL/pgSQL
// function's statements are planned once per session and kept until their tables' statistics
// change) scans the whole table ever after: on a fresh embedded node, with the empty ledger
// vacuumed at start, `ledger_append`'s probe for a market's last seq became a sequential scan,
// its cost grew with every order (600 calls of 8 rows: 49 ms per 100 calls at the end without
// that vacuum, 457 ms with it) and the embedded order path ran at half its speed. A table that
// small has nothing worth reclaiming either.
import { readRows, runScript, type PgliteReadEngine } from './pglite-script.ts';
import { WakeLoop } from './wake-loop.ts';

/** Tables smaller than this (in 8 KB pages) are never vacuumed: see the head of this file. */
export const MIN_VACUUM_PAGES = 10;

/** Tables the node updates or deletes from as it runs (those missing from a database are skipped). */
export const CHURNING_TABLES = [
  'actor_journal',
  'command_inbox',
  'outbox',
  'actor_snapshots',
  'consumer_offsets',
  'open_orders',
  'ledger_published',
  'clob_heartbeats',
  'auth_signins',
  'markets',
  'parlays',
  'parlay_legs',
  'parlay_templates',
  'parlay_template_legs',
  'vault',
  'settlements',
  'settlement_attempts',
  'ops_jobs',
  'ops_job_items',
] as const;

export interface PgliteHousekeepingOptions {
  /** WAL written since the last vacuum that calls for the next (0: no housekeeping at all). */
  vacuumWalBytes: number;
  /** WAL written since the last checkpoint's redo point that calls for a CHECKPOINT. */
  checkpointWalBytes: number;
  /** How often the WAL position is looked at. */
  everyMs?: number;
  /** A vacuum after this long with any WAL written, however little. */
  idleVacuumMs?: number;
  /** The whole database vacuumed this often while it is written to. */
  fullVacuumMs?: number;
  log: { debug(o: object, m?: string): void; warn(o: object, m?: string): void };
}

/** What one pass did. */
export interface HousekeepingPass {
  vacuumed: 'none' | 'tables' | 'all';
  checkpointed: boolean;
  ms: number;
}

interface WalPosition {
  /** Bytes of WAL written, ever (the current insert position). */
  at: bigint;
  /** Bytes of WAL written since the last checkpoint's redo point. */
  sinceRedo: bigint;
}

export class PgliteHousekeeping {
  private loop: WakeLoop;
  /** Where the WAL stood at the last vacuum, and when (the first pass only marks them). */
  private vacuumedAt: bigint | null = null;
  private vacuumedMs = 0;
  private fullMs = 0;
  private readonly everyMs: number;
  private readonly idleVacuumMs: number;
  private readonly fullVacuumMs: number;

  constructor(
    private engine: Promise<PgliteReadEngine>,
    private o: PgliteHousekeepingOptions,
  ) {
    this.everyMs = o.everyMs ?? 1_000;
    this.idleVacuumMs = o.idleVacuumMs ?? 60_000;
    this.fullVacuumMs = o.fullVacuumMs ?? 15 * 60_000;
    this.loop = new WakeLoop(
      async () => {
        await this.pass();
        return false;
      },
      { idleMs: this.everyMs, gapMs: 0, onError: (err) => o.log.warn({ err }, 'PGlite housekeeping failed; next pass later') },
    );
  }

  /**
   * Starts the passes, after one vacuum of the whole database (its tables of `MIN_VACUUM_PAGES` or
   * more): a database that never had one (an embedded node of an earlier version, up to its first
   * million parlays) has every page to visit once, which is best done before the node serves
   * anything, not by a pass between its commits (later vacuums visit only the pages written
   * since). New WAL segments are not zero-filled (`wal_init_zero`: 2,048 writes of 8 KB each
   * through the engine's file system per 16 MB segment, on the event loop); the session setting
   * lasts as long as the engine (one backend).
   */
  async start(): Promise<void> {
    if (this.o.vacuumWalBytes <= 0) return;
    const engine = await this.engine;
    const started = performance.now();
    await runScript(engine, 'set wal_init_zero = off');
    await vacuum(engine, await sizable(engine, null));
    this.vacuumedAt = (await walPosition(engine)).at;
    this.vacuumedMs = this.fullMs = Date.now();
    this.o.log.debug({ ms: Math.round(performance.now() - started) }, 'PGlite vacuumed at start');
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One pass: vacuum and checkpoint as the WAL written since the last ones calls for. */
  async pass(now = Date.now()): Promise<HousekeepingPass> {
    const started = performance.now();
    const engine = await this.engine;
    const wal = await walPosition(engine);
    if (this.vacuumedAt === null) {
      this.vacuumedAt = wal.at;
      this.vacuumedMs = this.fullMs = now;
    }
    const written = wal.at - this.vacuumedAt;
    let due: 'none' | 'tables' | 'all' = 'none';
    if (written > 0n && now - this.fullMs >= this.fullVacuumMs) due = 'all';
    else if (written >= BigInt(this.o.vacuumWalBytes) || (written > 0n && now - this.vacuumedMs >= this.idleVacuumMs)) due = 'tables';
    let vacuumed: HousekeepingPass['vacuumed'] = 'none';
    if (due !== 'none' && (await vacuum(engine, await sizable(engine, due === 'all' ? null : CHURNING_TABLES)))) vacuumed = due;
    const checkpointed = wal.sinceRedo >= BigInt(this.o.checkpointWalBytes);
    if (checkpointed) await runScript(engine, 'checkpoint');
    if (due !== 'none') {
      // What the vacuum itself wrote does not call for the next one (nor, when every table was
      // too small to vacuum, a look at their sizes every second).
      this.vacuumedAt = (await walPosition(engine)).at;
      this.vacuumedMs = now;
      if (due === 'all') this.fullMs = now;
    }
    const ms = performance.now() - started;
    if (vacuumed !== 'none' || checkpointed)
      this.o.log.debug({ vacuumed, checkpointed, walBytes: written.toString(), ms: Math.round(ms) }, 'PGlite housekeeping');
    return { vacuumed, checkpointed, ms };
  }
}

async function walPosition(engine: PgliteReadEngine): Promise<WalPosition> {
  const [r] = await readRows(
    engine,
    `select pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::text as at,
            pg_wal_lsn_diff(pg_current_wal_lsn(), (select redo_lsn from pg_control_checkpoint()))::text as since`,
    [],
  );
  return { at: BigInt(String(r.at)), sinceRedo: BigInt(String(r.since)) };
}

/**
 * The tables of at least `MIN_VACUUM_PAGES` among `names` (in `public`; those missing skipped), or
 * with `null`, of the whole database (`public` and the catalogs), as quoted qualified names.
 */
async function sizable(engine: PgliteReadEngine, names: readonly string[] | null): Promise<string[]> {
  const rows = await readRows(
    engine,
    `select format('%I.%I', n.nspname, c.relname) as name, c.relname as rel, n.nspname = 'public' as public
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'r' and n.nspname in ('public', 'pg_catalog')
        and pg_relation_size(c.oid) >= $1::bigint * current_setting('block_size')::bigint`,
    [MIN_VACUUM_PAGES],
  );
  if (!names) return rows.map((r) => String(r.name));
  const wanted = new Set(names);
  return rows.filter((r) => r.public === true && wanted.has(String(r.rel))).map((r) => String(r.name));
}

/** Vacuums `tables` (none: nothing done); whether it ran. */
async function vacuum(engine: PgliteReadEngine, tables: string[]): Promise<boolean> {
  if (!tables.length) return false;
  await runScript(engine, `vacuum ${tables.join(', ')}`);
  return true;
}

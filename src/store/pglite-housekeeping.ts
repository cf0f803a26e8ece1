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
import { readRows, runScript, type PgliteReadEngine } from './pglite-script.ts';
import { WakeLoop } from './wake-loop.ts';

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
  private tables: string[] | null = null;
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
   * Starts the passes, after one vacuum of the whole database: a database that never had one (an
   * embedded node of an earlier version, up to its first million parlays) has every page to visit
   * once, which is best done before the node serves anything, not by a pass between its commits
   * (later vacuums visit only the pages written since). New WAL segments are not zero-filled
   * (`wal_init_zero`: 2,048 writes of 8 KB each through the engine's file system per 16 MB
   * segment, on the event loop); the session setting lasts as long as the engine (one backend).
   */
  async start(): Promise<void> {
    if (this.o.vacuumWalBytes <= 0) return;
    const engine = await this.engine;
    const started = performance.now();
    await runScript(engine, 'set wal_init_zero = off');
    await runScript(engine, 'vacuum');
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
    let vacuumed: HousekeepingPass['vacuumed'] = 'none';
    if (written > 0n && now - this.fullMs >= this.fullVacuumMs) {
      await runScript(engine, 'vacuum');
      vacuumed = 'all';
    } else if (written >= BigInt(this.o.vacuumWalBytes) || (written > 0n && now - this.vacuumedMs >= this.idleVacuumMs)) {
      const tables = (this.tables ??= await existing(engine, CHURNING_TABLES));
      if (tables.length) await runScript(engine, `vacuum ${tables.join(', ')}`);
      vacuumed = 'tables';
    }
    const checkpointed = wal.sinceRedo >= BigInt(this.o.checkpointWalBytes);
    if (checkpointed) await runScript(engine, 'checkpoint');
    if (vacuumed !== 'none') {
      // What the vacuum itself wrote does not call for the next one.
      this.vacuumedAt = (await walPosition(engine)).at;
      this.vacuumedMs = now;
      if (vacuumed === 'all') this.fullMs = now;
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

async function existing(engine: PgliteReadEngine, names: readonly string[]): Promise<string[]> {
  const rows = await readRows(
    engine,
    `select c.relname from pg_class c where c.relkind = 'r' and c.relnamespace = 'public'::regnamespace`,
    [],
  );
  const present = new Set(rows.map((r) => String(r.relname)));
  return names.filter((n) => present.has(n)).map((n) => `"${n}"`);
}

// The settlement executor (issue 5, SPEC 3.2): takes every matched trade to the chain.
//
// Intake: consumes `ledger.trades` (its own consumer group) and records a `settlements` row per
// `trade_matched`; idempotent, so redelivery changes nothing. Work: a loop steps every trade that
// is not final. One step holds the trade's row lock (FOR UPDATE SKIP LOCKED, so nodes share the
// work and never step one trade at once) and decides from the chain's own record:
//
//   1. read the block height, THEN the statuses of every signature ever signed for the trade (a
//      transaction that did not land before that height was read can never land afterwards);
//   2. one landed without error → MINED, and CONFIRMED once finalized (the settlement point);
//   3. the latest landed with an error → out of compute units: retry with the compute-unit limit
//      and the priority fee doubled; any other error (allowance, balance): FAILED;
//   4. the latest did not land: blockhash still valid → send the same bytes again (same signature,
//      lands at most once); expired → re-execute with a fresh blockhash;
//   5. a new attempt is signed and stored (with its signature, bytes and last valid height) and
//      committed BEFORE it is sent. Attempts are bounded: the last failure is final.
//
// Before a new attempt, every token account the settlement credits must exist: the settlement
// transaction creates none (that keeps it small enough for the book's maker caps). When some are
// missing, the step makes no attempt; after its commit it sends preparatory transactions of
// idempotent creations (`sendAccountCreations`) and a later step looks again. They move no funds,
// so they need no exactly-once bookkeeping: they may be sent again any time (a node that died
// after sending them just sends them again); a failure is retried like an RPC error.
//
// So whatever instant the executor dies at, the next step finds either no new attempt or a stored
// one it asks the chain about first: a trade is settled at most once, and eventually once.
// Status changes go to the market's book as `UpdateTrade` commands through the outbox, committed
// with the step; the book writes them to the ledger (trade_mined, trade_confirmed, trade_retrying,
// trade_failed) with the market's gap-free seq and to the trades read model. After FAILED is on
// the ledger, the executor calls POST /v1/orders/size-update to invalidate the orders involved.
import { tradeMatchedRef } from '../../topics/ledger.ts';
import { writeSync } from 'node:fs';
import { Connection, PublicKey, type Keypair, type TransactionError } from '@solana/web3.js';
import type { Logger } from 'pino';
import type { Bus, ConsumerHandle } from '../runtime/types.ts';
import type { Orm } from '../store/orm.ts';
import { enqueue } from '../store/outbox.ts';
import { countSettlement } from '../metrics.ts';
import { toJson } from '../runtime/json.ts';
import {
  BUDGET_INSTRUCTIONS, MAX_COMPUTE_UNITS, estimateComputeUnits, planAccountCreations, planSettlement, signWithBudget,
  type Destination, type SettlementTrade,
} from '../chain/settlement-tx.ts';

type Em = { execute(sql: string, params?: unknown[]): Promise<any[]> };

export interface ExecutorOptions {
  orm: Orm;
  bus: Bus;
  log: Logger;
  /** the chain; null while none is configured (the executor waits) */
  connection: () => Connection | null;
  delegate: Keypair;
  feeRecipient: PublicKey;
  collateralMint: () => Promise<string | null>;
  bookTopic: string;
  tradesTopic: string;
  groupId: string;
  /** POST /v1/orders/size-update of this node */
  sizeUpdate: (body: { trade_id: string; orders: string[]; reason: string }) => Promise<void>;
  /** consume ledger.trades from the bus (false: read trade_matched rows of ledger_messages instead) */
  fromBus: boolean;
  maxAttempts: number;
  cuPrice: bigint;
  pollMs: number;
  /** Crash hook for tests: `before-send:N` / `after-send:N` SIGKILLs this process at the N-th send
   *  of a settlement transaction, `after-prepare:N` after the N-th sending of preparatory ones. */
  crashPoint?: string;
}

/** Preparatory transactions sent for a trade: their signatures, bytes and last valid block height. */
export interface SentCreations { signatures: string[]; raw: Buffer[]; lastValidBlockHeight: number }

/**
 * Sends the preparatory transactions that create the `missing` token accounts (idempotently,
 * paid by `payer`), split as planAccountCreations fits them; `cuFactor` multiplies their
 * compute-unit limit (doubled by the caller after one failed on chain). Simulated first
 * (preflight): a refusal or an RPC failure throws. Harmless to repeat: an account that exists is
 * left as it is, and nothing else is moved.
 */
export async function sendAccountCreations(
  conn: Connection, payer: Keypair, missing: Destination[], o: { cuPrice: bigint; cuFactor?: number },
): Promise<SentCreations> {
  const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
  const signatures: string[] = [];
  const raw: Buffer[] = [];
  for (const ixs of planAccountCreations(payer, missing)) {
    const cuLimit = Math.min(MAX_COMPUTE_UNITS, estimateComputeUnits(ixs) * (o.cuFactor ?? 1));
    const tx = signWithBudget(payer, ixs, { blockhash, cuLimit, cuPrice: o.cuPrice });
    await conn.sendRawTransaction(tx.raw, { skipPreflight: false, preflightCommitment: 'confirmed' });
    signatures.push(tx.signature);
    raw.push(tx.raw);
  }
  return { signatures, raw, lastValidBlockHeight };
}

export interface SettlementRow {
  trade_id: string; market: string; status: string; attempts: number; cu_limit: number; cu_price: string;
  signature: string | null; reason: string | null; culprits: string[] | string; reconciled: boolean;
}

/** True when a failed transaction ran out of compute units (as the SVM reports it). */
export function outOfCompute(err: TransactionError | null, logs: string[] = []): boolean {
  const ie = (err as any)?.InstructionError;
  if (ie && (ie[1] === 'ProgramFailedToComplete' || ie[1] === 'ComputationalBudgetExceeded')) {
    return logs.length === 0 || logs.some((l) => /exceeded CUs meter|compute units|Computational budget exceeded/i.test(l));
  }
  return logs.some((l) => /exceeded CUs meter|Computational budget exceeded/i.test(l));
}

export class SettlementExecutor {
  private consumer: ConsumerHandle | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private sends = 0;
  private preps = 0;
  /** statuses the current step reported (counted once it commits) */
  private said: string[] = [];
  /** per trade awaiting its token accounts: the preparatory transactions last sent from here (memory only) */
  private prepared = new Map<string, SentCreations & { cuFactor: number }>();

  constructor(private o: ExecutorOptions) {}

  private em(): any {
    return this.o.orm.em.fork();
  }

  async start(): Promise<void> {
    if (this.o.fromBus) {
      await this.o.bus.ensureTopics([{ topic: this.o.tradesTopic, partitions: this.o.bus.partitionsOf(this.o.tradesTopic) || 12 }]);
      this.consumer = await this.o.bus.consume({
        groupId: this.o.groupId, topics: [this.o.tradesTopic], fromBeginning: true,
        onBatch: async (batch) => {
          const rows: { trade_id: string; market: string }[] = [];
          for (const r of batch.records) {
            try {
              const m = tradeMatchedRef.safeParse(JSON.parse(r.value));
              if (m.success) rows.push({ trade_id: m.data.trade.id, market: m.data.market });
            } catch { /* not ours to judge: the ledger's consumers skip what they cannot read */ }
          }
          if (rows.length) await this.intake(rows);
          return { done: true };
        },
      });
    }
    const loop = async () => {
      if (this.stopped) return;
      this.running = this.tick().then(() => undefined, (err) => this.o.log.error({ err }, 'settlement pass failed; retrying'));
      await this.running;
      this.running = null;
      if (!this.stopped) this.timer = setTimeout(loop, this.o.pollMs);
    };
    void loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.consumer?.stop();
    await this.running;
  }

  /** Records trades to settle; a trade seen before, or no longer MATCHED on the read model, is left as it is. */
  async intake(rows: { trade_id: string; market: string }[]): Promise<void> {
    await this.em().execute(
      `insert into settlements (trade_id, market, status, attempts, cu_limit, cu_price, culprits, reconciled, next_at, created_at, updated_at)
       select t.trade_id, t.market, 'MATCHED', 0, 0, ?, '[]'::jsonb, false, now(), now(), now()
       from jsonb_to_recordset(?::jsonb) as t(trade_id text, market text)
       join trades tr on tr.id = t.trade_id and tr.status = 'MATCHED'
       on conflict (trade_id) do nothing`,
      [this.o.cuPrice.toString(), toJson(rows)],
    );
  }

  /** One pass over the trades that are due. */
  async tick(): Promise<number> {
    if (!this.o.fromBus) {
      await this.em().execute(
        `insert into settlements (trade_id, market, status, attempts, cu_limit, cu_price, culprits, reconciled, next_at, created_at, updated_at)
         select l.payload->'trade'->>'id', l.market, 'MATCHED', 0, 0, ?, '[]'::jsonb, false, now(), now(), now()
         from ledger_messages l join trades tr on tr.id = l.payload->'trade'->>'id' and tr.status = 'MATCHED'
         where l.topic = 'trades' and l.type = 'trade_matched'
           and not exists (select 1 from settlements s where s.trade_id = l.payload->'trade'->>'id')
         on conflict (trade_id) do nothing`,
        [this.o.cuPrice.toString()],
      );
    }
    const conn = this.o.connection();
    if (!conn) return 0;
    const due: { trade_id: string }[] = await this.em().execute(
      `select trade_id from settlements where (status not in ('CONFIRMED', 'FAILED') or not reconciled) and next_at <= now()
       order by next_at limit 50`,
    );
    for (const { trade_id } of due) {
      if (this.stopped) break;
      try {
        await this.step(trade_id, conn);
      } catch (err) {
        this.o.log.warn({ err, trade: trade_id }, 'settlement step failed; will retry');
        await this.em().execute('update settlements set next_at = now() + make_interval(secs => ?) where trade_id = ?', [Math.max(0.5, this.o.pollMs / 1000 * 4), trade_id]);
      }
    }
    return due.length;
  }

  /** Steps one trade (see the file's head). */
  async step(tradeId: string, conn: Connection): Promise<void> {
    let toSend: { raw: Buffer; signature: string } | null = null;
    let reconcile: SettlementRow | null = null;
    let prepare: Destination[] | null = null;
    this.said = [];
    // Read before the row lock: it may come from the database (the mirrored program config), and
    // embedded (PGlite, one connection) a query beside the open transaction would wait for ever.
    const collateral = await this.o.collateralMint();
    await this.em().transactional(async (em: any) => {
      const [row]: SettlementRow[] = await em.execute('select * from settlements where trade_id = ? for update skip locked', [tradeId]);
      if (!row) return; // another node steps it now
      if (row.status === 'FAILED') { if (!row.reconciled) reconcile = row; return; }
      if (row.status === 'CONFIRMED') return;
      const attempts: any[] = await em.execute('select * from settlement_attempts where trade_id = ? order by attempt', [tradeId]);
      const height = attempts.length ? await conn.getBlockHeight('confirmed') : 0;
      const statuses = attempts.length
        ? (await conn.getSignatureStatuses(attempts.map((a) => a.signature), { searchTransactionHistory: true })).value
        : [];
      const landed = attempts.findIndex((_, i) => statuses[i] && statuses[i]!.err === null);
      if (landed >= 0) {
        const st = statuses[landed]!;
        const sig = attempts[landed].signature;
        const finalized = st.confirmationStatus === 'finalized';
        const news: string[] = [];
        if (row.status !== 'MINED') news.push('MINED');
        if (finalized) news.push('CONFIRMED');
        await this.say(em, row, news, { transactionHash: sig, attempt: attempts[landed].attempt });
        await em.execute(
          `update settlements set status = ?, signature = ?, reconciled = ?, next_at = now() + make_interval(secs => ?), updated_at = now() where trade_id = ?`,
          [finalized ? 'CONFIRMED' : 'MINED', sig, finalized, this.o.pollMs / 1000, tradeId],
        );
        await em.execute(`update settlement_attempts set outcome = 'landed' where trade_id = ? and attempt = ?`, [tradeId, attempts[landed].attempt]);
        return;
      }
      const last = attempts.at(-1);
      let cuLimit = row.cu_limit;
      let cuPrice = BigInt(row.cu_price);
      let why = '';
      let retrying: { transactionHash: string; attempt: number; reason: string } | null = null;
      if (last) {
        const st = statuses[attempts.length - 1];
        if (st && st.err) {
          const got = await conn.getTransaction(last.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 }).catch(() => null);
          const logs = got?.meta?.logMessages ?? [];
          if (outOfCompute(st.err, logs)) {
            await em.execute(`update settlement_attempts set outcome = 'out_of_compute' where trade_id = ? and attempt = ?`, [tradeId, last.attempt]);
            cuLimit = Math.min(MAX_COMPUTE_UNITS, cuLimit * 2);
            cuPrice = cuPrice * 2n;
            why = 'out of compute units';
          } else {
            await em.execute(`update settlement_attempts set outcome = 'failed' where trade_id = ? and attempt = ?`, [tradeId, last.attempt]);
            const culprits = await this.culprits(em, tradeId, st.err);
            await this.fail(em, row, `settlement transaction failed: ${JSON.stringify(st.err)}`, culprits, last.signature, last.attempt);
            return;
          }
        } else if (height <= Number(last.last_valid_block_height)) {
          // In flight (or lost on the way): the same bytes again; it lands once at most.
          toSend = { raw: Buffer.from(last.tx, 'base64'), signature: last.signature };
          await em.execute('update settlements set next_at = now() + make_interval(secs => ?), updated_at = now() where trade_id = ?', [this.o.pollMs / 1000, tradeId]);
          return;
        } else {
          await em.execute(`update settlement_attempts set outcome = 'expired' where trade_id = ? and attempt = ?`, [tradeId, last.attempt]);
          why = 'blockhash expired before the transaction landed';
        }
        if (attempts.length >= this.o.maxAttempts) {
          await this.fail(em, row, `gave up after ${attempts.length} attempts: ${why}`, null, last.signature, last.attempt);
          return;
        }
        retrying = { transactionHash: last.signature, attempt: last.attempt, reason: why };
      }
      // A new attempt. First every token account it credits must exist: if some do not, no
      // attempt now and no status reported (only the time of the next step is recorded, which
      // decides all of the above again from the chain); the missing ones are created after the commit.
      const trade = await this.trade(em, tradeId);
      if (!trade) throw new Error(`trade ${tradeId} is not in the read model yet`);
      if (!collateral) throw new Error('the collateral mint is not known yet');
      const accounts = { collateralMint: new PublicKey(collateral), delegate: this.o.delegate.publicKey, feeRecipient: this.o.feeRecipient };
      const plan = planSettlement(trade, accounts);
      const infos = await conn.getMultipleAccountsInfo(plan.destinations.map((d) => d.account), 'confirmed');
      const missing = plan.destinations.filter((_, i) => !infos[i]);
      if (missing.length) {
        prepare = missing;
        await em.execute('update settlements set next_at = now() + make_interval(secs => ?), updated_at = now() where trade_id = ?', [this.o.pollMs / 1000, tradeId]);
        return;
      }
      if (retrying) await this.say(em, row, ['RETRYING'], retrying);
      // Signed and stored before it is sent.
      if (!cuLimit) cuLimit = estimateComputeUnits(plan.instructions);
      const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
      let signed;
      try {
        signed = signWithBudget(this.o.delegate, plan.instructions, { blockhash, cuLimit, cuPrice });
      } catch (e) {
        await this.fail(em, row, `settlement transaction cannot be built: ${(e as Error).message}`, null, '', attempts.length);
        return;
      }
      const n = attempts.length + 1;
      await em.execute(
        `insert into settlement_attempts (trade_id, attempt, signature, tx, blockhash, last_valid_block_height, cu_limit, cu_price, created_at)
         values (?, ?, ?, ?, ?, ?, ?, ?, now())`,
        [tradeId, n, signed.signature, signed.raw.toString('base64'), blockhash, lastValidBlockHeight, cuLimit, cuPrice.toString()],
      );
      // Until the trade fails, `culprits` holds the latest attempt's blame list (instruction → order).
      await em.execute(
        `update settlements set status = ?, attempts = ?, cu_limit = ?, cu_price = ?, signature = ?, culprits = ?::jsonb,
           next_at = now() + make_interval(secs => ?), updated_at = now() where trade_id = ?`,
        [attempts.length ? 'RETRYING' : 'MATCHED', n, cuLimit, cuPrice.toString(), signed.signature, toJson(plan.blame), this.o.pollMs / 1000, tradeId],
      );
      toSend = { raw: signed.raw, signature: signed.signature };
    });
    for (const s of this.said) countSettlement(s === 'RETRYING' ? 'retried' : s.toLowerCase());
    if (prepare) await this.prepare(conn, tradeId, prepare);
    else this.prepared.delete(tradeId);
    if (toSend) await this.send(conn, toSend);
    if (reconcile) await this.reconcile(reconcile);
  }

  /**
   * Creates the token accounts a trade's settlement credits (see the file's head). Preparatory
   * transactions sent from here and still able to land are sent again as they are (same
   * signatures) and waited for; else (none, one failed on chain, or their blockhash expired) new
   * ones are sent, after a failure with twice the compute-unit limit. A throw (RPC error, refused
   * in simulation) is retried by a later pass.
   */
  private async prepare(conn: Connection, tradeId: string, missing: Destination[]): Promise<void> {
    const sent = this.prepared.get(tradeId);
    let cuFactor = 1;
    if (sent) {
      const height = await conn.getBlockHeight('confirmed');
      const statuses = (await conn.getSignatureStatuses(sent.signatures, { searchTransactionHistory: true })).value;
      const failed = statuses.find((st) => st?.err);
      if (!failed && height <= sent.lastValidBlockHeight) {
        // on its way (or lost on the way): the same bytes again; the next step looks again
        for (const [i, raw] of sent.raw.entries()) {
          if (!statuses[i]) await conn.sendRawTransaction(raw, { skipPreflight: true, maxRetries: 0 }).catch(() => undefined);
        }
        return;
      }
      cuFactor = sent.cuFactor;
      if (failed) {
        cuFactor = Math.min(cuFactor * 2, 64);
        this.o.log.warn({ trade: tradeId, err: failed.err }, 'creating the settlement\'s token accounts failed on chain; sending again');
      }
    }
    this.prepared.delete(tradeId);
    const again = await sendAccountCreations(conn, this.o.delegate, missing, { cuPrice: this.o.cuPrice, cuFactor });
    this.prepared.set(tradeId, { ...again, cuFactor });
    this.o.log.debug({ trade: tradeId, accounts: missing.length, signatures: again.signatures }, 'settlement token accounts being created');
    this.preps += 1;
    this.crash('after-prepare');
  }

  private async send(conn: Connection, s: { raw: Buffer; signature: string }): Promise<void> {
    this.sends += 1;
    this.crash('before-send');
    try {
      await conn.sendRawTransaction(s.raw, { skipPreflight: true, maxRetries: 0 });
    } catch (err) {
      // Expired, already processed, or the RPC is away: the next step asks the chain what happened.
      this.o.log.debug({ err, signature: s.signature }, 'settlement send failed');
    }
    this.crash('after-send');
  }

  private crash(point: string): void {
    const m = this.o.crashPoint ? /^(before-send|after-send|after-prepare):(\d+)$/.exec(this.o.crashPoint) : null;
    if (m && m[1] === point && (point === 'after-prepare' ? this.preps : this.sends) === Number(m[2])) {
      writeSync(2, `SETTLEMENT_CRASH_POINT reached (${this.o.crashPoint}): SIGKILL\n`); // synchronously: nothing runs after the kill
      process.kill(process.pid, 'SIGKILL');
    }
  }

  /** The orders to blame for a failed instruction: its party's, or every order of the trade. */
  private async culprits(em: Em, tradeId: string, err: TransactionError): Promise<string[] | null> {
    const ie = (err as any)?.InstructionError;
    if (!Array.isArray(ie) || typeof ie[0] !== 'number') return null;
    const [row] = await em.execute('select culprits from settlements where trade_id = ?', [tradeId]);
    const blame: (string | null)[] = typeof row?.culprits === 'string' ? JSON.parse(row.culprits) : row?.culprits ?? [];
    const who = blame[ie[0] - BUDGET_INSTRUCTIONS];
    return who ? [who] : null;
  }

  private async fail(em: Em, row: SettlementRow, reason: string, culprits: string[] | null, signature: string, attempt: number): Promise<void> {
    let orders = culprits;
    if (!orders) {
      const t = await this.trade(em, row.trade_id);
      orders = t ? [t.taker_order_id, ...t.maker_orders.map((m) => m.order_id)] : [];
    }
    await this.say(em, row, ['FAILED'], { transactionHash: signature, attempt, reason });
    await em.execute(
      `update settlements set status = 'FAILED', reason = ?, culprits = ?::jsonb, reconciled = false, next_at = now(), updated_at = now() where trade_id = ?`,
      [reason.slice(0, 480), toJson([...new Set(orders)]), row.trade_id],
    );
    this.o.log.warn({ trade: row.trade_id, reason, orders }, 'settlement failed');
  }

  /** FAILED is on the ledger (the trades read model shows it): invalidate the orders involved. */
  private async reconcile(row: SettlementRow): Promise<void> {
    const [t] = await this.em().execute('select status from trades where id = ?', [row.trade_id]);
    if (t?.status !== 'FAILED') {
      await this.em().execute('update settlements set next_at = now() + make_interval(secs => ?) where trade_id = ?', [this.o.pollMs / 1000, row.trade_id]);
      return;
    }
    const orders: string[] = typeof row.culprits === 'string' ? JSON.parse(row.culprits) : row.culprits;
    await this.o.sizeUpdate({ trade_id: row.trade_id, orders: orders.filter(Boolean), reason: 'settlement failed' });
    await this.em().execute(`update settlements set reconciled = true, updated_at = now() where trade_id = ? and status = 'FAILED'`, [row.trade_id]);
  }

  /** Status news for the market's book (through the outbox, in this step's transaction). */
  private async say(em: Em, row: SettlementRow, statuses: string[], o: { transactionHash: string; attempt: number; reason?: string }): Promise<void> {
    const now = Date.now();
    this.said.push(...statuses);
    await enqueue(em, statuses.map((status) => ({
      topic: this.o.bookTopic, key: row.market,
      value: toJson({
        v: 1, id: `settle:${row.trade_id}:${status}:${o.attempt}`, at: now,
        cmd: { type: 'UpdateTrade', tradeId: row.trade_id, status, now, transactionHash: o.transactionHash, attempt: o.attempt, ...(o.reason ? { reason: o.reason.slice(0, 480) } : {}) },
      }),
    })));
  }

  private async trade(em: Em, tradeId: string): Promise<SettlementTrade | null> {
    const [t] = await em.execute(
      'select id, taker_order_id, asset_id, side, owner, notional::text, fee::text, match_type, maker_orders from trades where id = ?', [tradeId],
    );
    if (!t) return null;
    return { ...t, maker_orders: typeof t.maker_orders === 'string' ? JSON.parse(t.maker_orders) : t.maker_orders };
  }
}

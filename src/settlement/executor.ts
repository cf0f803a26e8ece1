// The settlement executor (issue 5, SPEC 3.2): takes every matched trade to the chain.
//
// Intake: consumes `ledger.trades` (its own consumer group) and records a `settlements` row per
// `trade_matched`; idempotent, so redelivery changes nothing. Work: a loop steps every trade that
// is not final. This file is the shell around the rules of `decider.ts` (issue 17); one step:
//
//   1. LEASE: takes the trade in one short statement (`lease_owner` = a token of this step,
//      `lease_until` = now + leaseMs) unless another step holds it; nodes share the work and never
//      step one trade at once;
//   2. OBSERVE and DECIDE, with no transaction open and no connection held: reads the stored
//      attempts and the trade, then asks `decide` and makes each look-up it names (block height
//      THEN signature statuses, the failed attempt's logs, the missing token accounts, a fresh
//      blockhash and the signed new attempt) until it answers with actions;
//   3. RECORD: one short transaction, fenced by the lease (it first releases the lease it still
//      holds; if another step took it meanwhile, nothing is recorded and nothing sent): attempt
//      outcomes, the new attempt (signed and stored BEFORE it is sent), the row, and the statuses
//      for the market's book (`UpdateTrade` through the outbox);
//   4. after the commit, SEND: the new attempt or the same bytes again, and the preparatory
//      transactions that create missing token accounts (`sendAccountCreations`; they move no
//      funds, so they need no exactly-once bookkeeping and may be sent again any time).
//
// So whatever instant the executor dies at, the next step finds either no new attempt or a stored
// one it asks the chain about first: a trade is settled at most once, and eventually once. A step
// killed while it holds a lease only delays the trade until the lease runs out.
// The book writes the statuses to the ledger (trade_mined, trade_confirmed, trade_retrying,
// trade_failed) with the market's gap-free seq and to the trades read model. After FAILED is on
// the ledger, the executor calls POST /v1/orders/size-update to invalidate the orders involved
// (under the lease, before recording that it did).
import { envelopeJson } from '../runtime/envelope.ts';
import type { BookProtocol } from '../../topics/clob-commands.ts';
import { tradeMatchedRef } from '../../topics/ledger.ts';
import { randomBytes } from 'node:crypto';
import { writeSync } from 'node:fs';
import { Connection, PublicKey, type Keypair, type SignatureStatus } from '@solana/web3.js';
import type { Logger } from 'pino';
import type { Bus, ConsumerHandle } from '../runtime/types.ts';
import type { Orm } from '../store/orm.ts';
import { enqueue } from '../store/outbox.ts';
import { countSettlement } from '../metrics.ts';
import { toJson } from '../runtime/json.ts';
import {
  MAX_COMPUTE_UNITS,
  estimateComputeUnits,
  planAccountCreations,
  planSettlement,
  signWithBudget,
  type Destination,
  type SettlementTrade,
} from '../chain/settlement-tx.ts';
import { decide, decideCreations, type Action, type Observations, type SignatureView } from './decider.ts';

export { outOfCompute } from './decider.ts';

type Em = { execute(sql: string, params?: unknown[]): Promise<any[]> };

export interface ExecutorOptions {
  orm: Orm;
  bus: Bus;
  log: Logger;
  /** A step's record committed status news for the books to the outbox: the relay sends them now. */
  onOutbox?: () => void;
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
  /** how long a step holds its lease on a trade (default 20 s): a step killed mid-way delays the
   *  trade that long; one slower than that loses the lease and records nothing */
  leaseMs?: number;
  /** Crash hook for tests: `before-send:N` / `after-send:N` SIGKILLs this process at the N-th send
   *  of a settlement transaction, `after-prepare:N` after the N-th sending of preparatory ones. */
  crashPoint?: string;
}

/** Preparatory transactions sent for a trade: their signatures, bytes and last valid block height. */
export interface SentCreations {
  signatures: string[];
  raw: Buffer[];
  lastValidBlockHeight: number;
}

/**
 * Sends the preparatory transactions that create the `missing` token accounts (idempotently,
 * paid by `payer`), split as planAccountCreations fits them; `cuFactor` multiplies their
 * compute-unit limit (doubled by the caller after one failed on chain). Simulated first
 * (preflight): a refusal or an RPC failure throws. Harmless to repeat: an account that exists is
 * left as it is, and nothing else is moved.
 */
export async function sendAccountCreations(
  conn: Connection,
  payer: Keypair,
  missing: Destination[],
  o: { cuPrice: bigint; cuFactor?: number },
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

/** Where a step's look-ups land: what `decide` reads, and what the shell keeps for its effects. */
interface StepLook {
  obs: Observations;
  raw: Map<number, Buffer>;
  trade?: SettlementTrade | null;
  plan?: ReturnType<typeof planSettlement>;
  built?: { raw: Buffer; signature: string; blockhash: string; lastValidBlockHeight: number; cuLimit: number };
}

/** How long an idle fetch of `ledger.trades` waits at the broker (intake is not a reply anyone waits on). */
const INTAKE_IDLE_WAIT_MS = 500;

const parseJson = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
/** What the decider reads of a signature status. */
const viewOf = (st: SignatureStatus | null): SignatureView =>
  st ? { err: st.err, finalized: st.confirmationStatus === 'finalized' } : null;

export class SettlementExecutor {
  private consumer: ConsumerHandle | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private running: Promise<void> | null = null;
  private sends = 0;
  private preps = 0;
  /** this executor's name in `lease_owner` (with a step counter) */
  private readonly id = randomBytes(6).toString('hex');
  private leases = 0;
  /** per trade awaiting its token accounts: the preparatory transactions last sent from here (memory only) */
  private prepared = new Map<string, SentCreations & { cuFactor: number }>();

  constructor(private o: ExecutorOptions) {}

  private em(): any {
    return this.o.orm.em.fork();
  }

  private get leaseSecs(): number {
    return (this.o.leaseMs ?? 20_000) / 1000;
  }

  async start(): Promise<void> {
    if (this.o.fromBus) {
      await this.o.bus.ensureTopics([{ topic: this.o.tradesTopic, partitions: this.o.bus.partitionsOf(this.o.tradesTopic) || 12 }]);
      this.consumer = await this.o.bus.consume({
        groupId: this.o.groupId,
        topics: [this.o.tradesTopic],
        fromBeginning: true,
        // A trade record still ends the wait at once; only the idle fetches and heartbeats (every
        // node's, all day) are fewer. A pause or retry of a partition is seen at the next fetch.
        idleWaitMs: INTAKE_IDLE_WAIT_MS,
        onBatch: async (batch) => {
          const rows: { trade_id: string; market: string }[] = [];
          for (const r of batch.records) {
            try {
              const m = tradeMatchedRef.safeParse(JSON.parse(r.value));
              if (m.success) rows.push({ trade_id: m.data.trade.id, market: m.data.market });
            } catch {
              /* not ours to judge: the ledger's consumers skip what they cannot read */
            }
          }
          if (rows.length) await this.intake(rows);
          return { done: true };
        },
      });
    }
    const loop = async () => {
      if (this.stopped) return;
      this.running = this.tick().then(
        () => undefined,
        (err) => this.o.log.error({ err }, 'settlement pass failed; retrying'),
      );
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
         and (lease_until is null or lease_until < now())
       order by next_at limit 50`,
    );
    for (const { trade_id } of due) {
      if (this.stopped) break;
      try {
        await this.step(trade_id, conn);
      } catch (err) {
        this.o.log.warn({ err, trade: trade_id }, 'settlement step failed; will retry'); // the step put its next one off
      }
    }
    return due.length;
  }

  /** Steps one trade (see the file's head). */
  async step(tradeId: string, conn: Connection): Promise<void> {
    const token = `${this.id}:${++this.leases}`;
    // 1. the lease: one statement, no transaction held
    const [row]: any[] = await this.em().execute(
      `update settlements set lease_owner = ?, lease_until = now() + make_interval(secs => ?)
       where trade_id = ? and next_at <= now() and (lease_until is null or lease_until < now())
         and (status not in ('CONFIRMED', 'FAILED') or not reconciled)
       returning *`,
      [token, this.leaseSecs, tradeId],
    );
    if (!row) return; // another node steps it now, or it is not due
    try {
      // 2. observe and decide, with no transaction open
      const look = await this.observe(tradeId, row, conn);
      const actions = look.actions;
      for (const a of actions)
        if (a.type === 'invalidate') await this.o.sizeUpdate({ trade_id: tradeId, orders: a.orders, reason: 'settlement failed' });
      // 3. record, fenced by the lease
      const held = await this.record(tradeId, row.market, token, actions, look);
      if (!held) {
        this.o.log.info({ trade: tradeId }, 'settlement lease lost before recording; the step is dropped');
        return;
      }
      this.o.onOutbox?.();
      // 4. effects after the commit
      for (const a of actions) {
        if (a.type === 'report') countSettlement(a.status === 'RETRYING' ? 'retried' : a.status.toLowerCase());
        if (a.type === 'fail') {
          countSettlement('failed');
          this.o.log.warn({ trade: tradeId, reason: a.reason, orders: a.orders }, 'settlement failed');
        }
      }
      const prepare = actions.find((a) => a.type === 'prepare');
      if (prepare) await this.prepare(conn, tradeId, prepare.missing);
      else this.prepared.delete(tradeId);
      for (const a of actions) {
        if (a.type === 'send') await this.send(conn, look.built!);
        if (a.type === 'resend') await this.send(conn, { raw: look.raw.get(a.attempt)!, signature: a.signature });
      }
    } catch (err) {
      // the trade waits a little (an RPC error before or after the record), and the lease goes
      // back at once if this step still holds it
      await this.em()
        .execute(
          `update settlements set next_at = now() + make_interval(secs => ?),
           lease_owner = case when lease_owner = ? then null else lease_owner end,
           lease_until = case when lease_owner = ? then null else lease_until end
         where trade_id = ?`,
          [Math.max(0.5, (this.o.pollMs / 1000) * 4), token, token, tradeId],
        )
        .catch(() => undefined);
      throw err;
    }
  }

  /** Asks `decide` and makes every look-up it names (RPC or database, no transaction open) until it answers. */
  private async observe(tradeId: string, row: any, conn: Connection): Promise<StepLook & { actions: Action[] }> {
    const stored: any[] =
      row.status === 'FAILED'
        ? []
        : await this.em().execute(
            'select attempt, signature, tx, last_valid_block_height::text from settlement_attempts where trade_id = ? order by attempt',
            [tradeId],
          );
    const trade = row.status === 'FAILED' ? null : await this.trade(this.em(), tradeId);
    const look: StepLook = {
      raw: new Map(stored.map((a) => [a.attempt, Buffer.from(a.tx, 'base64')])),
      trade,
      obs: {
        row: {
          status: row.status,
          reconciled: row.reconciled,
          cuLimit: row.cu_limit,
          cuPrice: BigInt(row.cu_price),
          blame: parseJson(row.culprits) ?? [],
        },
        attempts: stored.map((a) => ({
          attempt: a.attempt,
          signature: a.signature,
          lastValidBlockHeight: Number(a.last_valid_block_height),
        })),
        orders: trade ? [trade.taker_order_id, ...trade.maker_orders.map((m) => m.order_id)] : [],
        maxAttempts: this.o.maxAttempts,
      },
    };
    const o = look.obs;
    for (;;) {
      const actions = decide(o);
      const need = actions[0]?.type === 'observe' ? actions[0] : null;
      if (!need) return { ...look, actions };
      switch (need.need) {
        case 'chain': {
          // the height first: a transaction that did not land before it was read never lands after it
          const height = await conn.getBlockHeight('confirmed');
          const statuses = (
            await conn.getSignatureStatuses(
              o.attempts.map((a) => a.signature),
              { searchTransactionHistory: true },
            )
          ).value;
          o.chain = { height, statuses: statuses.map(viewOf) };
          break;
        }
        case 'logs': {
          const got = await conn
            .getTransaction(o.attempts.at(-1)!.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })
            .catch(() => null);
          o.logs = got?.meta?.logMessages ?? [];
          break;
        }
        case 'accounts': {
          if (!look.trade) throw new Error(`trade ${tradeId} is not in the read model yet`);
          const collateral = await this.o.collateralMint();
          if (!collateral) throw new Error('the collateral mint is not known yet');
          const accounts = {
            collateralMint: new PublicKey(collateral),
            delegate: this.o.delegate.publicKey,
            feeRecipient: this.o.feeRecipient,
          };
          const plan = (look.plan = planSettlement(look.trade, accounts));
          const infos = await conn.getMultipleAccountsInfo(
            plan.destinations.map((d) => d.account),
            'confirmed',
          );
          o.missing = plan.destinations.filter((_, i) => !infos[i]);
          break;
        }
        case 'build': {
          const ixs = look.plan!.instructions;
          const cuLimit = need.cuLimit ?? estimateComputeUnits(ixs);
          const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
          try {
            const signed = signWithBudget(this.o.delegate, ixs, { blockhash, cuLimit, cuPrice: need.cuPrice! });
            look.built = { raw: signed.raw, signature: signed.signature, blockhash, lastValidBlockHeight, cuLimit };
            o.build = { ok: true };
          } catch (e) {
            o.build = { ok: false, error: (e as Error).message };
          }
          break;
        }
        case 'ledger': {
          const [t] = await this.em().execute('select status from trades where id = ?', [tradeId]);
          o.ledgerFailed = t?.status === 'FAILED';
          break;
        }
      }
    }
  }

  /**
   * Records a step's actions in one short transaction, only while its lease is still its own (the
   * first statement releases it and locks the row until the commit). False: the lease was lost.
   */
  private async record(tradeId: string, market: string, token: string, actions: Action[], look: StepLook): Promise<boolean> {
    let held = false;
    const poll = this.o.pollMs / 1000;
    await this.em().transactional(async (em: Em) => {
      const mine = await em.execute(
        'update settlements set lease_owner = null, lease_until = null where trade_id = ? and lease_owner = ? returning trade_id',
        [tradeId, token],
      );
      if (!mine.length) return;
      held = true;
      let nextIn = poll;
      const report = (status: string, x: { transactionHash: string; attempt: number; reason?: string }) =>
        this.report(em, tradeId, market, status, x);
      for (const a of actions) {
        switch (a.type) {
          case 'mark':
            await em.execute('update settlement_attempts set outcome = ? where trade_id = ? and attempt = ?', [
              a.outcome,
              tradeId,
              a.attempt,
            ]);
            break;
          case 'landed':
            await em.execute('update settlements set status = ?, signature = ?, reconciled = ? where trade_id = ?', [
              a.finalized ? 'CONFIRMED' : 'MINED',
              a.signature,
              a.finalized,
              tradeId,
            ]);
            await em.execute(`update settlement_attempts set outcome = 'landed' where trade_id = ? and attempt = ?`, [tradeId, a.attempt]);
            break;
          case 'report':
            await report(a.status, a);
            break;
          case 'send': {
            const b = look.built!;
            await em.execute(
              `insert into settlement_attempts (trade_id, attempt, signature, tx, blockhash, last_valid_block_height, cu_limit, cu_price, created_at)
               values (?, ?, ?, ?, ?, ?, ?, ?, now())`,
              [
                tradeId,
                a.attempt,
                b.signature,
                b.raw.toString('base64'),
                b.blockhash,
                b.lastValidBlockHeight,
                b.cuLimit,
                a.cuPrice.toString(),
              ],
            );
            // Until the trade fails, `culprits` holds the latest attempt's blame list (instruction → order).
            await em.execute(
              'update settlements set status = ?, attempts = ?, cu_limit = ?, cu_price = ?, signature = ?, culprits = ?::jsonb where trade_id = ?',
              [a.status, a.attempt, b.cuLimit, a.cuPrice.toString(), b.signature, toJson(look.plan!.blame), tradeId],
            );
            break;
          }
          case 'fail':
            await report('FAILED', a);
            await em.execute(
              `update settlements set status = 'FAILED', reason = ?, culprits = ?::jsonb, reconciled = false where trade_id = ?`,
              [a.reason.slice(0, 480), toJson(a.orders), tradeId],
            );
            nextIn = 0;
            break;
          case 'invalidate':
            await em.execute(`update settlements set reconciled = true where trade_id = ? and status = 'FAILED'`, [tradeId]);
            break;
          case 'observe':
          case 'resend':
          case 'prepare':
          case 'wait':
            break; // nothing to record: the next step decides again from the chain
        }
      }
      await em.execute('update settlements set next_at = now() + make_interval(secs => ?), updated_at = now() where trade_id = ?', [
        nextIn,
        tradeId,
      ]);
    });
    return held;
  }

  /** Status news for the market's book (through the outbox, in the recording transaction). */
  private async report(
    em: Em,
    tradeId: string,
    market: string,
    status: string,
    o: { transactionHash: string; attempt: number; reason?: string },
  ): Promise<void> {
    const now = Date.now();
    await enqueue(em, [
      {
        topic: this.o.bookTopic,
        key: market,
        value: envelopeJson<BookProtocol['cmd']>(
          {
            type: 'UpdateTrade',
            tradeId,
            status: status as 'MINED' | 'CONFIRMED' | 'RETRYING' | 'FAILED',
            now,
            transactionHash: o.transactionHash,
            attempt: o.attempt,
            ...(o.reason ? { reason: o.reason.slice(0, 480) } : {}),
          },
          { id: `settle:${tradeId}:${status}:${o.attempt}`, at: now },
        ),
      },
    ]);
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
    const mine = sent && { cuFactor: sent.cuFactor, lastValidBlockHeight: sent.lastValidBlockHeight, count: sent.raw.length };
    let d = decideCreations(mine);
    if (d.type === 'observe') {
      const height = await conn.getBlockHeight('confirmed');
      const statuses = (await conn.getSignatureStatuses(sent!.signatures, { searchTransactionHistory: true })).value;
      d = decideCreations(mine, { height, statuses: statuses.map(viewOf) });
    }
    if (d.type === 'resend') {
      // on its way (or lost on the way): the same bytes again; the next step looks again
      for (const i of d.indexes) await conn.sendRawTransaction(sent!.raw[i], { skipPreflight: true, maxRetries: 0 }).catch(() => undefined);
      return;
    }
    if (d.type !== 'create') return;
    const cuFactor = d.cuFactor;
    if (d.afterFailure)
      this.o.log.warn({ trade: tradeId, err: d.afterFailure }, "creating the settlement's token accounts failed on chain; sending again");
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

  private async trade(em: Em, tradeId: string): Promise<SettlementTrade | null> {
    const [t] = await em.execute(
      'select id, taker_order_id, asset_id, side, owner, notional::text, fee::text, match_type, maker_orders from trades where id = ?',
      [tradeId],
    );
    if (!t) return null;
    return { ...t, maker_orders: typeof t.maker_orders === 'string' ? JSON.parse(t.maker_orders) : t.maker_orders };
  }
}

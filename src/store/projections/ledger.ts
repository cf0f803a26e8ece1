// Writes the MarketBook actor's events into the ledger read models (open_orders, trades,
// trade_parties) and, through the outbox, tells the wallets what their orders hold no more.
import type { Applied, StoreTx } from '../../runtime/types.ts';
import { envelopeJson } from '../../runtime/envelope.ts';
import { toJson } from '../../runtime/json.ts';
import { enqueue, type OutboxMessage } from '../outbox.ts';
import { microToDecimal } from '../../../topics/units.ts';
import type { LedgerPayload } from '../../../topics/ledger.ts';
import type { WalletProtocol } from '../../../topics/wallet-commands.ts';
import type { MarketBookEvent } from '../../../actors/market-book/index.ts';

type Ev = MarketBookEvent;
const iso = (ms: number) => new Date(ms).toISOString();
const dec = microToDecimal;

export interface LedgerProjectionOptions {
  walletTopic: string;
}

/** A wallet command through the outbox (topics/wallet-commands.ts), named by its idempotency key. */
type WalletMessage = OutboxMessage & { msgKey: string };

function walletCommand(topic: string, key: string, cmd: WalletProtocol['cmd'], o: { id: string; at: number }): WalletMessage {
  return { topic, key, value: envelopeJson(cmd, o), msgKey: o.id };
}

/** The wallet command (as the outbox carries it) that releases what an event frees. */
function release(
  topic: string,
  id: string,
  orderId: string,
  rel: { owner: string; asset: string; amount: bigint; inBook?: true } | undefined,
  reason: string,
  at: number,
  market: string,
): WalletMessage | null {
  if (!rel || rel.amount <= 0n) return null;
  // Held by the book itself: a SELL's tokens are free with the book's own event (nothing for the
  // wallet); a BUY's collateral on credit stays the book's credit, but what a fill spent of it the
  // wallet's credit loses too (credit.ts).
  if (rel.inBook)
    return reason === 'filled' && rel.asset === 'collateral'
      ? walletCommand(topic, rel.owner, { type: 'CreditSpent', market, amount: rel.amount.toString() }, { id, at })
      : null;
  return walletCommand(topic, rel.owner, { type: 'Release', orderId, amount: rel.amount.toString(), reason }, { id, at });
}

export function ledgerProjection(o: LedgerProjectionOptions) {
  return async function projectLedger(tx: StoreTx, applied: Applied<unknown, Ev, unknown>[]): Promise<void> {
    // By order id: an order delayed and then placed in one batch (a replay, a busy partition) is one
    // row, as its last event left it (an upsert cannot change one row twice in one statement).
    const orders = new Map<string, Record<string, unknown>>();
    const updates: { id: string; size_matched: string; status: string; trade: string | null; at: string }[] = [];
    const trades: Record<string, unknown>[] = [];
    const parties: Record<string, unknown>[] = [];
    const tradeUpdates: { id: string; status: string; hash: string; at: string }[] = [];
    const wallet: WalletMessage[] = [];
    const ledger: Record<string, unknown>[] = [];
    // One public ledger message (topics/ledger.ts): its type is a column, the rest its payload.
    const say = (market: string, owner: string | null, at: number, msg: LedgerPayload) => {
      const { type, ...payload } = msg;
      ledger.push({
        market,
        topic: type.startsWith('order_') ? 'orders' : 'trades',
        type,
        owner_lc: owner?.toLowerCase() ?? null,
        at: iso(at),
        ord: ledger.length,
        payload,
      });
    };
    const w = o.walletTopic;
    for (const a of applied) {
      const market = a.key;
      for (const e of a.events) {
        switch (e.type) {
          case 'OrderPlaced':
          case 'OrderDelayed': {
            const od = e.order;
            const tradeIds = e.type === 'OrderPlaced' ? (e.tradeIds ?? []) : [];
            orders.set(od.hash, {
              id: od.hash,
              market,
              asset_id: od.tokenId,
              owner: od.owner,
              owner_lc: od.owner.toLowerCase(),
              side: od.side,
              outcome: od.outcome,
              original_size: od.size.toString(),
              size_matched: (od.sizeMatched ?? 0n).toString(),
              price: od.price,
              status: e.type === 'OrderDelayed' ? 'DELAYED' : e.status,
              associate_trades: tradeIds,
              type: od.orderType,
              fee_rate_bps: od.feeRateBps,
              expiration: String(od.expiration),
              created_at: iso(od.createdAt),
              updated_at: iso(e.at),
            });
            say(market, od.owner, e.at, {
              type: e.type === 'OrderDelayed' ? 'order_delayed' : 'order_placed',
              order: {
                id: od.hash,
                owner: od.owner,
                asset_id: od.tokenId,
                side: od.side,
                outcome: od.outcome,
                price: dec(od.price),
                original_size: dec(od.size),
                size_matched: dec(od.sizeMatched ?? 0n),
                status: e.type === 'OrderDelayed' ? 'DELAYED' : e.status,
                type: od.orderType,
                expiration: String(od.expiration),
                created_at: String(Math.floor(od.createdAt / 1000)),
                associate_trades: tradeIds,
              },
            });
            // A resting or held order keeps its reservation: the hold taken before it reached the book is confirmed.
            if ((e.type === 'OrderDelayed' || e.status === 'LIVE') && !e.held && !od.inBook)
              wallet.push(walletCommand(w, od.owner, { type: 'Confirm', orderId: od.hash }, { id: `confirm:${od.hash}`, at: e.at }));
            if (e.type === 'OrderPlaced') {
              // The release's id (the wallet's inbox key, at most 255 characters): the trade ids
              // joined, as always for one or two trades; an execution split into more trades by the
              // maker caps is named by its first trade and their count (an order is placed once).
              const ids = tradeIds;
              const m = release(
                w,
                `fill:${od.hash}:${ids.length <= 2 ? ids.join(',') : `${ids[0]}+${ids.length}`}`,
                od.hash,
                e.release,
                'filled',
                e.at,
                market,
              );
              if (m) wallet.push(m);
            }
            break;
          }
          case 'OrderUpdated':
            updates.push({ id: e.orderId, size_matched: e.sizeMatched.toString(), status: e.status, trade: e.tradeId, at: iso(e.at) });
            say(market, e.owner, e.at, {
              type: 'order_updated',
              order_id: e.orderId,
              owner: e.owner,
              size_matched: dec(e.sizeMatched),
              status: e.status,
              trade_id: e.tradeId,
            });
            {
              const m = release(w, `fill:${e.orderId}:${e.tradeId}`, e.orderId, e.release, 'filled', e.at, market);
              if (m) wallet.push(m);
            }
            break;
          case 'OrderCancelled':
          case 'OrderEjected':
          case 'OrderInvalidated': {
            const status =
              e.type === 'OrderCancelled'
                ? 'CANCELED'
                : e.type === 'OrderInvalidated'
                  ? 'INVALIDATED'
                  : e.reason === 'expired'
                    ? 'EXPIRED'
                    : 'EJECTED';
            updates.push({
              id: e.orderId,
              size_matched: e.sizeMatched.toString(),
              status,
              trade: (e.type === 'OrderInvalidated' ? e.tradeId : null) ?? null,
              at: iso(e.at),
            });
            const end = {
              order_id: e.orderId as string,
              owner: e.owner as string,
              size_matched: dec(e.sizeMatched),
              reason: (e.reason ?? null) as string | null,
            };
            say(
              market,
              e.owner,
              e.at,
              e.type === 'OrderCancelled'
                ? { type: 'order_cancelled', ...end, status: 'CANCELED' }
                : e.type === 'OrderInvalidated'
                  ? { type: 'order_invalidated', ...end, status: 'INVALIDATED', ...(e.tradeId ? { trade_id: e.tradeId } : {}) }
                  : { type: 'order_ejected', ...end, status: status as 'EXPIRED' | 'EJECTED' },
            );
            // (a cancel whose wallet frees the holds itself, handed on with the answer, needs no Release)
            const m =
              e.type === 'OrderCancelled' && e.walletReleased
                ? null
                : release(w, `${status.toLowerCase()}:${e.orderId}`, e.orderId, e.release, status.toLowerCase(), e.at, market);
            if (m) wallet.push(m);
            break;
          }
          case 'HoldReturned':
            // The order never was on the book: what its wallet holds for it goes back, all of it.
            wallet.push(
              walletCommand(
                w,
                e.owner,
                { type: 'Release', orderId: e.orderId, reason: 'rejected' },
                { id: `returned:${e.orderId}`, at: e.at },
              ),
            );
            break;
          case 'TradeMatched': {
            const t = e.trade;
            trades.push({
              id: t.id,
              taker_order_id: t.taker_order_id,
              market,
              asset_id: t.asset_id,
              side: t.side,
              outcome: t.outcome,
              size: t.size.toString(),
              price: t.price,
              notional: t.notional.toString(),
              fee_rate_bps: t.fee_rate_bps,
              fee: t.fee.toString(),
              status: t.status,
              match_type: t.match_type,
              match_time: iso(t.match_time),
              last_update: iso(t.last_update),
              owner: t.owner,
              maker_address: t.maker_address,
              transaction_hash: t.transaction_hash ?? '',
              maker_orders: t.maker_orders.map((m) => ({ ...m, matched_amount: m.matched_amount.toString() })),
            });
            say(market, null, t.match_time, {
              type: 'trade_matched',
              trade: {
                id: t.id,
                taker_order_id: t.taker_order_id,
                market,
                asset_id: t.asset_id,
                side: t.side,
                size: dec(t.size),
                price: dec(t.price),
                fee_rate_bps: String(t.fee_rate_bps),
                status: t.status,
                match_type: t.match_type,
                match_time: String(Math.floor(t.match_time / 1000)),
                owner: t.owner,
                maker_address: t.maker_address,
                transaction_hash: t.transaction_hash ?? '',
                maker_orders: t.maker_orders.map((m) => ({
                  order_id: m.order_id,
                  owner: m.owner,
                  maker_address: m.maker_address,
                  matched_amount: dec(m.matched_amount),
                  price: dec(m.price),
                  fee_rate_bps: String(m.fee_rate_bps),
                  asset_id: m.asset_id,
                  outcome: m.outcome,
                  side: m.side,
                })),
              },
            });
            const seen = new Set<string>();
            const party = (address: string, role: string) => {
              const k = `${address.toLowerCase()}|${role}`;
              if (seen.has(k)) return;
              seen.add(k);
              parties.push({
                trade_id: t.id,
                address_lc: address.toLowerCase(),
                role,
                market,
                asset_id: t.asset_id,
                match_time: iso(t.match_time),
              });
            };
            party(t.owner, 'TAKER');
            for (const m of t.maker_orders) party(m.owner, 'MAKER');
            break;
          }
          case 'TradeUpdated': {
            // Settlement news (src/settlement/): the trade's status on the read model and the ledger.
            tradeUpdates.push({ id: e.tradeId, status: e.status, hash: e.transactionHash, at: iso(e.at) });
            // The type follows the status (trade_mined for MINED, ...): one of topics/ledger.ts's trade news.
            say(market, null, e.at, {
              type: `trade_${String(e.status).toLowerCase()}` as 'trade_mined' | 'trade_confirmed' | 'trade_retrying' | 'trade_failed',
              trade_id: e.tradeId,
              status: e.status,
              transaction_hash: e.transactionHash,
              attempt: e.attempt,
              ...(e.reason ? { reason: e.reason } : {}),
              last_update: String(Math.floor(e.at / 1000)),
            } as Extract<LedgerPayload, { type: 'trade_mined' | 'trade_confirmed' | 'trade_retrying' | 'trade_failed' }>);
            break;
          }
          default:
            break;
        }
      }
    }
    if (orders.size) {
      // A function of migration Migration20261129100000: planned once per connection, not per commit.
      // Its rows are new orders but for one placed after it was delayed: tried as a plain insert
      // first (`usuallyNew`, Migration20261209100000), as written when one exists.
      await tx.execute('select open_orders_upsert(?::jsonb)', [toJson([...orders.values()])], { usuallyNew: true });
    }
    if (updates.length) {
      // One row per order: its last size, status and time, and every trade it joined in this batch,
      // in order (Migration20261201100000's function adds those it does not list yet).
      const byId = new Map<string, { id: string; size_matched: string; status: string; at: string; trades: string[] }>();
      for (const u of updates) {
        const row = byId.get(u.id);
        if (!row) byId.set(u.id, { id: u.id, size_matched: u.size_matched, status: u.status, at: u.at, trades: u.trade ? [u.trade] : [] });
        else {
          Object.assign(row, { size_matched: u.size_matched, status: u.status, at: u.at });
          if (u.trade && !row.trades.includes(u.trade)) row.trades.push(u.trade);
        }
      }
      await tx.execute('select open_orders_update(?::jsonb)', [toJson([...byId.values()])]);
    }
    if (trades.length) {
      await tx.execute(
        `insert into trades (id, taker_order_id, market, asset_id, side, outcome, size, price, notional, fee_rate_bps, fee, status, match_type,
           match_time, last_update, owner, maker_address, transaction_hash, maker_orders)
         select t.id, t.taker_order_id, t.market, t.asset_id, t.side, t.outcome, t.size, t.price, t.notional, t.fee_rate_bps, t.fee, t.status,
           t.match_type, t.match_time, t.last_update, t.owner, t.maker_address, t.transaction_hash, t.maker_orders
         from jsonb_to_recordset(?::jsonb) as t(id text, taker_order_id text, market text, asset_id text, side text, outcome text, size bigint,
           price int, notional bigint, fee_rate_bps int, fee bigint, status text, match_type text, match_time timestamptz, last_update timestamptz,
           owner text, maker_address text, transaction_hash text, maker_orders jsonb)
         on conflict (id) do nothing`,
        [toJson(trades)],
      );
      await tx.execute(
        `insert into trade_parties (trade_id, address_lc, role, market, asset_id, match_time)
         select t.trade_id, t.address_lc, t.role, t.market, t.asset_id, t.match_time
         from jsonb_to_recordset(?::jsonb) as t(trade_id text, address_lc text, role text, market text, asset_id text, match_time timestamptz)
         on conflict do nothing`,
        [toJson(parties)],
      );
    }
    for (const u of tradeUpdates) {
      // A final status stays final (a late duplicate of an earlier one changes nothing).
      await tx.execute(
        `update trades set status = ?, transaction_hash = case when ? = '' then transaction_hash else ? end, last_update = ?
         where id = ? and status not in ('CONFIRMED', 'FAILED')`,
        [u.status, u.hash, u.hash, u.at, u.id],
      );
    }
    if (ledger.length) {
      // One writer per market (its book's partition): the next seq of each (market, topic) is read and
      // assigned inside `ledger_append` (migration Migration20261205100000), gap-free; rows are never updated.
      await tx.execute('select ledger_append(?::jsonb)', [toJson(ledger)]);
    }
    // Sent by the worker right after the commit (kept in the outbox until then); the relay's only
    // if the worker could not send them.
    if (!wallet.length) return;
    if (tx.send) tx.send(wallet);
    else await enqueue(tx, wallet);
  };
}

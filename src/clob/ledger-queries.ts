// Reads of the ledger read models (open_orders, trades), scoped to the caller, shaped as
// contracts/clob.md answers them.
import { microToDecimal } from '../../topics/units.ts';

import type { TradeFilter } from '../api/clob.ts';
import type { Db } from '../db.ts';

const dec = (col: string) => `trim(trailing '.' from trim(trailing '0' from (${col}::numeric / 1000000)::numeric(40,6)::text))`;
const unix = (col: string) => `floor(extract(epoch from ${col}))::bigint::text`;

const OPEN_ORDER = `json_build_object('id', o.id, 'status', o.status, 'owner', o.owner, 'maker_address', o.owner, 'market', o.market,
  'asset_id', o.asset_id, 'side', o.side, 'outcome', o.outcome, 'original_size', ${dec('o.original_size')},
  'size_matched', ${dec('o.size_matched')}, 'price', ${dec('o.price')}, 'associate_trades', o.associate_trades, 'type', o.type,
  'created_at', ${unix('o.created_at')}, 'expiration', o.expiration::text)`;

const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

export async function openOrders(db: Db, wallet: string, f: { market?: string; id?: string }) {
  const params: unknown[] = [wallet.toLowerCase()];
  let where = 'o.owner_lc = ?';
  if (f.market) {
    where += ' and o.market = ?';
    params.push(f.market.toLowerCase());
  }
  if (f.id) {
    where += ' and o.id = ?';
    params.push(f.id);
  }
  const rows = await db.execute(
    `select ${OPEN_ORDER} as j from open_orders o where ${where} order by o.created_at desc, o.id limit 1000`,
    params,
  );
  return rows.map((r) => parse(r.j));
}

export type TradeParams = TradeFilter;

export async function trades(db: Db, wallet: string, f: TradeParams) {
  const me = wallet.toLowerCase();
  // The caller's part in each trade: taker, or maker of at least one leg.
  const conds = ['exists (select 1 from trade_parties p where p.trade_id = t.id and p.address_lc = ?)'];
  const params: unknown[] = [me];
  if (f.owner && f.owner.toLowerCase() !== me) return []; // scoped to the caller whatever the filters
  if (f.id) {
    conds.push('t.id = ?');
    params.push(f.id);
  }
  if (f.taker) {
    conds.push('lower(t.owner) = ?');
    params.push(f.taker.toLowerCase());
  }
  if (f.maker) {
    conds.push("exists (select 1 from trade_parties m where m.trade_id = t.id and m.role = 'MAKER' and m.address_lc = ?)");
    params.push(f.maker.toLowerCase());
  }
  if (f.market) {
    conds.push('t.market = ?');
    params.push(f.market.toLowerCase());
  }
  if (f.asset_id) {
    conds.push('t.asset_id = ?');
    params.push(f.asset_id);
  }
  // On match_time as shown (whole unix seconds): shown < before ⟺ match_time < before, and
  // shown > after ⟺ match_time ≥ after + 1 (a trade at after + 0.4 s shows as `after`).
  if (f.before !== undefined) {
    conds.push('t.match_time < to_timestamp(?)');
    params.push(f.before);
  }
  if (f.after !== undefined) {
    conds.push('t.match_time >= to_timestamp(?)');
    params.push(f.after + 1);
  }
  const rows = await db.execute(
    `select json_build_object('id', t.id, 'taker_order_id', t.taker_order_id, 'market', t.market, 'asset_id', t.asset_id, 'side', t.side,
       'size', ${dec('t.size')}, 'price', ${dec('t.price')}, 'fee_rate_bps', t.fee_rate_bps::text, 'status', t.status, 'match_type', t.match_type,
       'match_time', ${unix('t.match_time')}, 'last_update', ${unix('t.last_update')}, 'owner', t.owner, 'maker_address', t.maker_address,
       'trader_side', case when lower(t.owner) = ? then 'TAKER' else 'MAKER' end, 'transaction_hash', t.transaction_hash,
       'maker_orders', t.maker_orders) as j
     from trades t where ${conds.join(' and ')} order by t.match_time desc, t.id desc limit ?`,
    [me, ...params, f.limit],
  );
  return rows.map((r) => {
    const t = parse(r.j) as any;
    t.maker_orders = (t.maker_orders ?? []).map((m: any) => ({
      order_id: m.order_id,
      owner: m.owner,
      maker_address: m.maker_address,
      matched_amount: micro(m.matched_amount),
      price: micro(m.price),
      fee_rate_bps: String(m.fee_rate_bps),
      asset_id: m.asset_id,
      outcome: m.outcome,
      side: m.side,
    }));
    return t;
  });
}

export async function lastTrade(db: Db, market: string) {
  const rows = await db.execute(
    `select json_build_object('market', t.market, 'asset_id', t.asset_id, 'price', ${dec('t.price')}, 'size', ${dec('t.size')}, 'side', t.side,
       'match_time', ${unix('t.match_time')}) as j from trades t where t.market = ? order by t.match_time desc, t.id desc limit 1`,
    [market.toLowerCase()],
  );
  return rows.length ? parse(rows[0].j) : null;
}

const micro = (v: unknown): string => microToDecimal(String(v));

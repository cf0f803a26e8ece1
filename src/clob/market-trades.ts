// The public tape of a market (issue 18, the market page): its most recent trades, newest first,
// without owners, wallets or orders: what any visitor of the market may see. From the ledger's
// `trades` read model through trades_market_time_idx (market, match_time desc).
import { notFound } from '../errors.ts';
import type { Db } from '../db.ts';

/** Most trades one answer holds. */
export const MAX_MARKET_TRADES = 100;

export interface PublicTrade {
  id: string;
  /** the token the taker traded */
  asset_id: string;
  /** the taker's side */
  side: 'BUY' | 'SELL';
  /** in the asset's terms, decimal string of units */
  price: string;
  size: string;
  /** unix seconds, as text */
  match_time: string;
  status: string;
}

const dec = (col: string) => `trim(trailing '.' from trim(trailing '0' from (${col}::numeric / 1000000)::numeric(40,6)::text))`;

/** The market's last `limit` trades (1..100), newest first; 404 for a market the catalog does not know. */
export async function marketTrades(db: Db, market: string, limit: number): Promise<PublicTrade[]> {
  const id = market.toLowerCase();
  const known = await db.execute('select 1 from markets where condition_id = ?', [id]);
  if (!known.length) throw notFound(`no market ${id}`);
  const n = Math.max(1, Math.min(MAX_MARKET_TRADES, Math.trunc(limit)));
  const rows = await db.execute(
    `select t.id, t.asset_id, t.side, ${dec('t.price')} as price, ${dec('t.size')} as size,
            floor(extract(epoch from t.match_time))::bigint::text as match_time, t.status
       from trades t where t.market = ? order by t.match_time desc, t.id desc limit ?`,
    [id, n],
  );
  return rows.map((r: any) => ({
    id: r.id,
    asset_id: r.asset_id,
    side: r.side,
    price: r.price,
    size: r.size,
    match_time: String(r.match_time),
    status: r.status,
  }));
}

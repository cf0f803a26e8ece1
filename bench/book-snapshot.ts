// Benchmark (not a test): what one MarketBook snapshot costs as its finished-order memory fills,
// and once it has let 100,000 orders go into its let-go filter (actors/market-book/let-go.ts).
// Every batch that touches a market writes that market's whole snapshot (src/runtime/partition-worker.ts),
// so this is paid per batch per busy market: serialising here, then PostgreSQL parsing and storing
// the jsonb (measured against the real table when DATABASE_URL is given).
// Usage: npx tsx bench/book-snapshot.ts [resting=1000]   DATABASE_URL=… adds the upsert's cost.
import pg from 'pg';
import { initialBook, toSnapshot, FINISHED_CAP, type Finish } from '../actors/market-book/index.ts';
import { remember } from '../actors/market-book/finished.ts';
import { toJson } from '../src/runtime/json.ts';

const [resting = 1000] = process.argv.slice(2).map(Number);
const hex = (i: number) => '0x' + i.toString(16).padStart(64, '0');
const owner = (i: number) => 'Owner' + String(i % 500).padStart(39, 'x');
const client = process.env.DATABASE_URL ? new pg.Client({ connectionString: process.env.DATABASE_URL }) : null;
await client?.connect();
await client?.query('create temp table snap (kind text, key text, state jsonb, primary key (kind, key))');
const rows = [];
for (const finished of [0, 1000, FINISHED_CAP, FINISHED_CAP + 100_000]) {
  const s = initialBook('bench-market');
  for (let i = 0; i < finished; i++) remember(s, hex(i), owner(i), (i % 3 === 0 ? 'cancelled' : 'filled') satisfies Finish);
  // Resting orders in the snapshot's own shape (the cost measured is the JSON, not the matching).
  const orders = Array.from({ length: resting }, (_, i) => ({
    order: {
      hash: hex(1e9 + i),
      owner: owner(i),
      tokenId: 'YesMint',
      outcome: 'YES',
      side: 'BUY',
      price: 0.5,
      size: '10000000',
      sizeMatched: '0',
      remaining: '10000000',
      feeRateBps: 0,
      expiration: 0,
      orderType: 'GTC',
      createdAt: 1,
      seq: i,
      delayed: false,
    },
    bookedAt: 1,
  }));
  const n = 50;
  let json = '';
  const t0 = performance.now();
  for (let i = 0; i < n; i++) json = toJson({ ...toSnapshot(s), orders });
  const ser = (performance.now() - t0) / n;
  let db = '';
  if (client) {
    const t1 = performance.now();
    for (let i = 0; i < 10; i++)
      await client.query(`insert into snap values ('b', 'k', $1::jsonb) on conflict (kind, key) do update set state = excluded.state`, [
        json,
      ]);
    db = ((performance.now() - t1) / 10).toFixed(2);
  }
  rows.push({
    'finished orders': finished,
    'let go (in the filter)': s.letGo?.count ?? 0,
    'resting orders': resting,
    'snapshot KB': Math.round(json.length / 1024),
    'serialise ms': ser.toFixed(2),
    'PostgreSQL upsert ms': db,
  });
}
console.table(rows);
await client?.end();

// The ledger projection of a book commit (src/store/projections/ledger.ts) when one batch holds an
// order twice: delayed (it waited for the game's start) and then placed, as a partition's replay
// after a restart or a busy partition's batch brings them. Its open_orders row is written once, as
// the last event left it. On both stores, through the runtime store's commit.
import test from 'ava';
import { SqlRuntimeStore } from '../../../src/store/runtime-store.ts';
import { ledgerProjection } from '../../../src/store/projections/ledger.ts';
import type { Applied } from '../../../src/runtime/types.ts';
import type { MarketBookEvent } from '../../../actors/market-book/index.ts';
import { commitOf, storeDb } from '../../helpers/store-db.ts';

const order = {
  hash: '0x' + 'ab'.repeat(32),
  owner: 'Owner1111111111111111111111111111111111111',
  tokenId: 'Yes11111111111111111111111111111111111111',
  outcome: 'YES',
  side: 'BUY',
  price: 400_000,
  size: 3_000_000n,
  sizeMatched: 0n,
  remaining: 3_000_000n,
  feeRateBps: 0,
  expiration: 0,
  orderType: 'GTC',
  createdAt: Date.parse('2026-12-03T10:00:00Z'),
  seq: 1,
  delayed: true,
} as const;
const reservation = { owner: order.owner, asset: 'collateral', amount: 1_200_000n } as const;

const events = [
  {
    type: 'OrderDelayed',
    at: order.createdAt,
    order,
    releaseAt: order.createdAt + 5_000,
    mintMerge: true,
    distortionBound: 20_000,
    tradeId: null,
    reservation,
  },
  {
    type: 'OrderPlaced',
    at: order.createdAt + 5_000,
    order,
    status: 'LIVE',
    reservation,
    release: { owner: order.owner, asset: 'collateral', amount: 0n },
    tradeIds: [],
  },
] as unknown as MarketBookEvent[];

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`on ${on}: an order delayed and placed in one batch is one row, as placed`, async (t) => {
    const orm = await storeDb(t, on);
    const store = new SqlRuntimeStore(orm, 1);
    await store.resetOffset('g', 'topic', 0, 10n, 'a');
    const project = ledgerProjection({ walletTopic: 'wallet' });
    const applied = [{ key: 'market-1', events } as unknown as Applied<unknown, MarketBookEvent, unknown>];
    t.true(await store.commit(commitOf(0, (tx) => project(tx, applied))));
    const rows = (await (orm.em.fork() as any).execute(
      'select id, status, original_size::text as size, updated_at from open_orders where market = ?',
      ['market-1'],
    )) as { id: string; status: string; size: string; updated_at: Date | string }[];
    t.is(rows.length, 1);
    t.is(rows[0].id, order.hash);
    t.is(rows[0].status, 'LIVE');
    t.is(rows[0].size, '3000000');
    t.is(new Date(rows[0].updated_at).toISOString(), new Date(order.createdAt + 5_000).toISOString());
    const ledger = (await (orm.em.fork() as any).execute("select type from ledger_messages where market = 'market-1' order by seq")) as {
      type: string;
    }[];
    t.deepEqual(
      ledger.map((l) => l.type),
      ['order_delayed', 'order_placed'],
      'both ledger lines kept',
    );
  });
}

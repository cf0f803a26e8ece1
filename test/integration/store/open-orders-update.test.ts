// The open orders' update of a book commit (open_orders_update, Migration20261203100000): each row
// changes its order by the primary key, in the array's order; trades are appended once; an id the
// table does not hold changes nothing. On both stores.
import test from 'ava';
import { liveOrderRow, storeDb } from '../../helpers/store-db.ts';

const hex = (i: number) => '0x' + i.toString(16).padStart(64, '0');
const order = (i: number) => liveOrderRow(hex(i));

for (const on of ['PostgreSQL', 'PGlite'] as const) {
  test(`on ${on}: changes by id in order, trades appended once, unknown ids ignored`, async (t) => {
    const orm = await storeDb(t, on);
    const execute = (sql: string, params: unknown[] = []) => (orm.em.fork() as any).execute(sql, params) as Promise<any[]>;
    await execute('select open_orders_upsert(?::jsonb)', [JSON.stringify(Array.from({ length: 50 }, (_, i) => order(i)))]);
    const change = (id: number, size: string, status: string, trades: string[]) => ({
      id: hex(id),
      size_matched: size,
      status,
      at: '2026-11-27T00:00:01.000Z',
      trades,
    });
    await execute('select open_orders_update(?::jsonb)', [
      JSON.stringify([
        change(3, '1000000', 'LIVE', ['t1']),
        change(7, '0', 'CANCELED', []),
        change(3, '3000000', 'MATCHED', ['t1', 't2']), // the same order again in one call: applied after the first
        change(999, '1', 'CANCELED', ['tx']), // not in the table
      ]),
    ]);
    const rows = await execute(
      `select id, size_matched::text as s, status, associate_trades as tr, updated_at from open_orders where id in (?) order by id`,
      [[hex(3), hex(7), hex(8), hex(999)]],
    );
    const by = new Map(rows.map((r) => [r.id, r]));
    const trades = (r: any) => (typeof r.tr === 'string' ? JSON.parse(r.tr) : r.tr);
    t.is(rows.length, 3);
    t.is(by.get(hex(3)).s, '3000000');
    t.is(by.get(hex(3)).status, 'MATCHED');
    t.deepEqual(trades(by.get(hex(3))), ['t1', 't2']);
    t.is(by.get(hex(7)).status, 'CANCELED');
    t.deepEqual(trades(by.get(hex(7))), []);
    t.is(by.get(hex(8)).status, 'LIVE');
    t.is(new Date(by.get(hex(8)).updated_at).toISOString(), '2026-11-27T00:00:00.000Z');
    // Applied again (a commit retried whole): nothing doubles.
    await execute('select open_orders_update(?::jsonb)', [JSON.stringify([change(3, '3000000', 'MATCHED', ['t2', 't1'])])]);
    const [again] = await execute('select associate_trades as tr from open_orders where id = ?', [hex(3)]);
    t.deepEqual(trades(again), ['t1', 't2']);
    const [{ n }] = await execute(`select count(*)::int as n from open_orders`);
    t.is(n, 50);
  });
}

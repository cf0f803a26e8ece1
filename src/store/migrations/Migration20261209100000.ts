import { Migration } from '@mikro-orm/migrations';

/**
 * `open_orders_insert`: the rows of `open_orders_upsert` inserted plainly. A commit's new orders
 * almost never exist yet (an order placed after it was delayed is the exception), so the runtime
 * store tries its projection's upsert as this first (`usuallyNew`: src/store/runtime-store.ts) and
 * only on a unique violation runs the commit again with the upsert as written. Without the
 * speculative insertion of `on conflict (id) do update` (a probe of the primary key, then the
 * insert, then its confirmation) a commit costs PGlite a little less: the embedded order bench's
 * 881 commit scripts replayed (bench/pglite-replay.ts), five interleaved rounds, engine CPU 1,436 /
 * 1,393 / 1,406 / 1,399 / 1,418 ms against 1,434 / 1,427 / 1,440 / 1,429 / 1,484 with the upsert
 * (−2.3%; the new orders' rows are 12% of it).
 */
export class Migration20261209100000 extends Migration {
  override name = 'Migration20261209100000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function open_orders_insert(p_rows jsonb) returns void language plpgsql as $fn$
begin
  insert into open_orders (id, market, asset_id, owner, owner_lc, side, outcome, original_size, size_matched, price, status,
      associate_trades, type, fee_rate_bps, expiration, created_at, updated_at)
    select t.id, t.market, t.asset_id, t.owner, t.owner_lc, t.side, t.outcome, t.original_size, t.size_matched, t.price, t.status,
      t.associate_trades, t.type, t.fee_rate_bps, t.expiration, t.created_at, t.updated_at
    from jsonb_to_recordset(p_rows) as t(id text, market text, asset_id text, owner text, owner_lc text, side text, outcome text,
      original_size bigint, size_matched bigint, price int, status text, associate_trades jsonb, type text, fee_rate_bps int,
      expiration bigint, created_at timestamptz, updated_at timestamptz);
end
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists open_orders_insert(jsonb);`);
  }
}

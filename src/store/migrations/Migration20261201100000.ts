import { Migration } from '@mikro-orm/migrations';

/**
 * The open orders' changes of a commit (fills, cancels, expiries, invalidations) as one function
 * over a JSON array of rows, one row per order with its last size, status and time and the trades it
 * joined (src/store/projections/ledger.ts): it was one UPDATE per change, each parsed and planned
 * again in every commit. A PL/pgSQL function plans its statement once per connection, and a group
 * commit merges the arrays of its members (an order belongs to one market: one partition).
 */
export class Migration20261201100000 extends Migration {
  override name = 'Migration20261201100000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function open_orders_update(p jsonb) returns void language plpgsql as $fn$
begin
  update open_orders o set size_matched = u.size_matched, status = u.status, updated_at = u.at,
    associate_trades = o.associate_trades || coalesce(
      (select jsonb_agg(t.x order by t.i) from jsonb_array_elements(u.trades) with ordinality as t(x, i)
        where not o.associate_trades @> t.x), '[]'::jsonb)
  from jsonb_to_recordset(p) as u(id text, size_matched bigint, status text, at timestamptz, trades jsonb)
  where o.id = u.id;
end
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists open_orders_update(jsonb);`);
  }
}

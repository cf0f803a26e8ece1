import { Migration } from '@mikro-orm/migrations';

const SET_BASED = `update open_orders o set size_matched = u.size_matched, status = u.status, updated_at = u.at,
    associate_trades = o.associate_trades || coalesce(
      (select jsonb_agg(t.x order by t.i) from jsonb_array_elements(u.trades) with ordinality as t(x, i)
        where not o.associate_trades @> t.x), '[]'::jsonb)
  from jsonb_to_recordset(p) as u(id text, size_matched bigint, status text, at timestamptz, trades jsonb)
  where o.id = u.id;`;

/**
 * The open orders' update of a book commit (fills, cancels, expiries) one row at a time by its
 * primary key. As one UPDATE joined to `jsonb_to_recordset` (Migration20261201100000, with
 * `enable_seqscan = off` since Migration20261202100000) the planner still chose how to join the
 * batch to the table, from statistics that PGlite never refreshes (no autovacuum): in the embedded
 * node the update of ONE cancelled order took 1.4–1.9 ms of PGlite against 0.2–0.5 ms for every
 * other statement of its commit, and the same statement with `set local enable_seqscan = off`
 * instead of the function's SET clause 1.9 ms; the loop below 0.3–0.4 ms (bench/order-ratio.ts's
 * single client, per call, measured around each statement). A lookup by the primary key per row
 * costs what the batch holds, whatever the table's size or statistics. On PostgreSQL (analyzed,
 * 20,000 rows) the join was already a nested loop over the same index: the same cost either way.
 * The SET clause stays so that no cached plan may ever scan the table.
 */
export class Migration20261203100000 extends Migration {
  override name = 'Migration20261203100000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function open_orders_update(p jsonb) returns void language plpgsql set enable_seqscan = off as $fn$
declare
  u record;
begin
  for u in select * from jsonb_to_recordset(p) as t(id text, size_matched bigint, status text, at timestamptz, trades jsonb) loop
    update open_orders o set size_matched = u.size_matched, status = u.status, updated_at = u.at,
      associate_trades = o.associate_trades || coalesce(
        (select jsonb_agg(t.x order by t.i) from jsonb_array_elements(u.trades) with ordinality as t(x, i)
          where not o.associate_trades @> t.x), '[]'::jsonb)
      where o.id = u.id;
  end loop;
end
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace function open_orders_update(p jsonb) returns void language plpgsql set enable_seqscan = off as $fn$
begin
  ${SET_BASED}
end
$fn$;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * The front door's reads of the orders it places and cancels (src/clob/order-index.ts) joined a
 * batch of ids to open_orders the same way: as a function that goes by the primary key whatever
 * the table's statistics say (a table that grew since its last ANALYZE was planned as a tiny one,
 * and every read scanned all of it: 1,443 sequential scans of open_orders in one 600-order run).
 *
 * The open orders' update of every book commit (Migration20261201100000) joins the batch's rows
 * (jsonb_to_recordset, which the planner guesses at 100 rows) to open_orders, and with that guess
 * it hashed the batch and scanned the whole table: on a table of a few thousand orders, 3.6 ms per
 * commit on PGlite, growing with every order ever placed (on PostgreSQL too, until the table is big
 * enough for the index to look cheaper). The update goes by the primary key now (`set
 * enable_seqscan = off`, as ledger_take): its cost is the batch's, not the table's.
 */
export class Migration20261202100000 extends Migration {
  override name = 'Migration20261202100000';

  override up(): void | Promise<void> {
    this.addSql(`alter function open_orders_update(jsonb) set enable_seqscan = off;`);
    this.addSql(`create or replace function open_orders_known(p_ids jsonb)
returns table (id text, market text, owner_lc text, status text)
language sql stable set enable_seqscan = off as $fn$
  select o.id, o.market, o.owner_lc, o.status from open_orders o where o.id = any(array(select jsonb_array_elements_text(p_ids)))
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter function open_orders_update(jsonb) reset enable_seqscan;`);
    this.addSql(`drop function if exists open_orders_known(jsonb);`);
  }
}

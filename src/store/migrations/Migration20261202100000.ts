import { Migration } from '@mikro-orm/migrations';

/**
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
  }

  override down(): void | Promise<void> {
    this.addSql(`alter function open_orders_update(jsonb) reset enable_seqscan;`);
  }
}

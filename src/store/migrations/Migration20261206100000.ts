import { Migration } from '@mikro-orm/migrations';

/**
 * Every change of a market row is announced on `clob_markets` (its condition id, or `*` for a
 * statement that changed more than 100 markets), right after its commit: the front doors of every
 * node keep the markets they route orders to in memory (src/clob/order-index.ts) and forget one
 * when it changes, through whichever node or SQL session changed it, instead of reading every
 * market again every second (three nodes: ~0.1 reads per order, each a round trip in front of it).
 */
export class Migration20261206100000 extends Migration {
  override name = 'Migration20261206100000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function clob_markets_changed() returns trigger language plpgsql as $$
declare
  ids text[];
begin
  if tg_op = 'INSERT' then
    ids := array(select distinct lower(n.condition_id) from new_rows n);
  elsif tg_op = 'DELETE' then
    ids := array(select distinct lower(o.condition_id) from old_rows o);
  else
    ids := array(select lower(n.condition_id) from new_rows n union select lower(o.condition_id) from old_rows o);
  end if;
  if cardinality(ids) > 100 then
    perform pg_notify('clob_markets', '*');
  else
    perform pg_notify('clob_markets', i) from unnest(ids) as u(i);
  end if;
  return null;
end $$;`);
    this.addSql(
      `create trigger "markets_clob_ins" after insert on "markets" referencing new table as new_rows for each statement execute function clob_markets_changed();`,
    );
    this.addSql(
      `create trigger "markets_clob_upd" after update on "markets" referencing old table as old_rows new table as new_rows for each statement execute function clob_markets_changed();`,
    );
    this.addSql(
      `create trigger "markets_clob_del" after delete on "markets" referencing old table as old_rows for each statement execute function clob_markets_changed();`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "markets_clob_ins" on "markets";`);
    this.addSql(`drop trigger if exists "markets_clob_upd" on "markets";`);
    this.addSql(`drop trigger if exists "markets_clob_del" on "markets";`);
    this.addSql(`drop function if exists clob_markets_changed();`);
  }
}

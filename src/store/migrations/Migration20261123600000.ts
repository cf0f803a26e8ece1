import { Migration } from '@mikro-orm/migrations';

/**
 * The parlay read cache's trigger on `parlay_legs` looks up each changed leg's parlay by its key
 * (a lateral lookup, `limit 1` so that it is not flattened back into a join), instead of joining the transition table to `parlays`: without fresh planner
 * statistics (a table that grew since its last ANALYZE, autovacuum off or behind) the join was
 * planned as a hash join over a sequential scan of every parlay, on every batch.
 */
export class Migration20261123600000 extends Migration {
  override name = 'Migration20261123600000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function parlay_reads_of_legs() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform pg_notify('parlay_reads', w) from (select distinct lower(p.user_wallet) as w from (select distinct parlay_id from old_rows) l
      cross join lateral (select user_wallet from parlays where parlay_id = l.parlay_id limit 1) p) s;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform pg_notify('parlay_reads', w) from (select distinct lower(p.user_wallet) as w from (select distinct parlay_id from new_rows) l
      cross join lateral (select user_wallet from parlays where parlay_id = l.parlay_id limit 1) p) s;
  end if;
  return null;
end $$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`create or replace function parlay_reads_of_legs() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform pg_notify('parlay_reads', w) from (select distinct lower(p.user_wallet) as w from old_rows l join parlays p on p.parlay_id = l.parlay_id) s;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform pg_notify('parlay_reads', w) from (select distinct lower(p.user_wallet) as w from new_rows l join parlays p on p.parlay_id = l.parlay_id) s;
  end if;
  return null;
end $$;`);
  }
}

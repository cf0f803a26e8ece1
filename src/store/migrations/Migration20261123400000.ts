import { Migration } from '@mikro-orm/migrations';

/**
 * Change notifications for the parlay read cache (src/parlay/read-cache.ts): every committed change
 * to what a user's parlay reads show raises `NOTIFY parlay_reads` with the lower-cased wallet whose
 * reads changed, or `*` when it cannot tell (a market's question, a truncate). Triggers rather than
 * the writers' code, so that every writer is covered (projections, replays, operators' SQL);
 * statement-level with transition tables, so that a batch costs one trigger call per statement.
 * PostgreSQL folds repeated payloads of one transaction into one notification.
 */
export class Migration20261123400000 extends Migration {
  override name = 'Migration20261123400000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function parlay_reads_of_parlays() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    perform pg_notify('parlay_reads', w) from (select distinct lower(user_wallet) as w from old_rows) s;
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    perform pg_notify('parlay_reads', w) from (select distinct lower(user_wallet) as w from new_rows) s;
  end if;
  return null;
end $$;`);
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
    this.addSql(`create or replace function parlay_reads_of_markets() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' then
    if not exists (select 1 from new_rows n join old_rows o on o.condition_id = n.condition_id
        where n.question is distinct from o.question or n.on_chain_market_id is distinct from o.on_chain_market_id) then
      return null;
    end if;
  end if;
  perform pg_notify('parlay_reads', '*');
  return null;
end $$;`);
    this.addSql(`create or replace function parlay_reads_all() returns trigger language plpgsql as $$
begin
  perform pg_notify('parlay_reads', '*');
  return null;
end $$;`);
    for (const [table, fn] of [
      ['parlays', 'parlay_reads_of_parlays'],
      ['parlay_legs', 'parlay_reads_of_legs'],
      ['markets', 'parlay_reads_of_markets'],
    ]) {
      this.addSql(
        `create trigger "${table}_reads_ins" after insert on "${table}" referencing new table as new_rows for each statement execute function ${fn}();`,
      );
      this.addSql(
        `create trigger "${table}_reads_upd" after update on "${table}" referencing old table as old_rows new table as new_rows for each statement execute function ${fn}();`,
      );
      this.addSql(
        `create trigger "${table}_reads_del" after delete on "${table}" referencing old table as old_rows for each statement execute function ${fn}();`,
      );
      this.addSql(
        `create trigger "${table}_reads_trunc" after truncate on "${table}" for each statement execute function parlay_reads_all();`,
      );
    }
  }

  override down(): void | Promise<void> {
    for (const table of ['parlays', 'parlay_legs', 'markets']) {
      for (const s of ['ins', 'upd', 'del', 'trunc']) this.addSql(`drop trigger if exists "${table}_reads_${s}" on "${table}";`);
    }
    for (const fn of ['parlay_reads_of_parlays', 'parlay_reads_of_legs', 'parlay_reads_of_markets', 'parlay_reads_all'])
      this.addSql(`drop function if exists ${fn}();`);
  }
}

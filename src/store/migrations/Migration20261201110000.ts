import { Migration } from '@mikro-orm/migrations';

/**
 * The ledger relay's take as one function (src/clob/ledger-stream.ts): the markets it can lock
 * (advisory, per market: two relays never interleave one market's messages), their unpublished
 * rows up to a limit, marked published and returned, in one statement planned once per connection.
 * A drain was five round trips (begin, a planner setting, the select, the update, commit); it is
 * three now (begin, this, commit). The caller sends the rows before it commits: should the send
 * fail, the transaction rolls back and the rows stay unpublished. The partial index of unpublished
 * rows serves it; a sequential scan of the whole ledger is ruled out (`set enable_seqscan = off`:
 * a table grown since its last ANALYZE was planned as one).
 */
export class Migration20261201110000 extends Migration {
  override name = 'Migration20261201110000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function ledger_take(p_markets text[], p_limit int)
returns table (r_market text, r_topic text, r_seq bigint, r_type text, r_owner_lc text, r_payload jsonb, r_at timestamptz)
language plpgsql set enable_seqscan = off as $fn$
declare
  mk text[];
begin
  if p_markets is null then
    mk := array(select distinct l.market from ledger_messages l where not l.published limit 100);
  else
    mk := p_markets;
  end if;
  return query
    with locked as materialized (
      select u.m from unnest(mk) as u(m) where pg_try_advisory_xact_lock(hashtext('ledger:' || u.m))
    ), taken as (
      select l.market, l.topic, l.seq from ledger_messages l
      where l.market in (select k.m from locked k) and not l.published
      order by l.market, l.topic, l.seq limit p_limit
    )
    update ledger_messages l set published = true from taken t
    where l.market = t.market and l.topic = t.topic and l.seq = t.seq and not l.published
    returning l.market::text, l.topic::text, l.seq, l.type::text, l.owner_lc::text, l.payload, l.at;
end
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists ledger_take(text[], int);`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * The public ledger append-only: a ledger row is written once and never updated. What the relay
 * has published is one mark per (market, topic), `ledger_published.seq` (rows up to it went out),
 * instead of a `published` flag on every row. The flag cost each row a second write: the relay's
 * update of a column in a partial index's predicate is never HOT, so every published row was a new
 * heap tuple, a new primary-key entry and a dead tuple to vacuum, and every insert an entry in the
 * partial index besides (3 nodes on Kafka: ledger rows were 40% of the inserts and 55% of the
 * updates, none HOT). `ledger_unpublished` shows what is left to publish.
 *
 * `ledger_append` reads each (market, topic)'s last seq once per call, not once per row.
 * `ledger_take` keeps its signature (nodes of the version before call it during a rolling
 * upgrade): the markets it can lock (advisory, per market: two relays never interleave one
 * market's messages) are locked by one statement, and their rows past the marks are taken, and the
 * marks moved, by the next, whose snapshot therefore sees every mark a relay before it committed.
 * A full drain finds the markets whose ledger is past its mark by a walk of the primary key (one
 * index probe per market), not by a scan of the table. Published rows were a prefix of each
 * (market, topic)'s seqs (the relay took them in seq order), so the marks start at their last.
 */
export class Migration20261205100000 extends Migration {
  override name = 'Migration20261205100000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "ledger_published" ("market" varchar(255) not null, "topic" varchar(16) not null, "seq" bigint not null, primary key ("market", "topic"));`,
    );
    this.addSql(
      `insert into ledger_published (market, topic, seq) select market, topic, max(seq) from ledger_messages where published group by market, topic;`,
    );
    this.addSql(`drop index if exists "ledger_messages_unpublished_idx";`);
    this.addSql(`alter table "ledger_messages" drop column "published";`);
    this.addSql(`create view ledger_unpublished as
  select l.* from ledger_messages l
  where l.seq > coalesce((select p.seq from ledger_published p where p.market = l.market and p.topic = l.topic), 0);`);
    this.addSql(`create or replace function ledger_append(p_rows jsonb) returns void language plpgsql as $fn$
begin
  -- One writer per market (its book's partition): the next seqs of each (market, topic) follow its last one, gap-free.
  insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at)
    with t as (
      select * from jsonb_to_recordset(p_rows) as t(market text, topic text, type text, owner_lc text, payload jsonb, at timestamptz, ord int)
    ), last as (
      select k.market, k.topic,
        coalesce((select max(l.seq) from ledger_messages l where l.market = k.market and l.topic = k.topic), 0) as seq
      from (select distinct t.market, t.topic from t) k
    )
    select t.market, t.topic, last.seq + row_number() over (partition by t.market, t.topic order by t.ord),
      t.type, t.owner_lc, t.payload, t.at
    from t join last on last.market = t.market and last.topic = t.topic;
end
$fn$;`);
    this.addSql(`create or replace function ledger_take(p_markets text[], p_limit int)
returns table (r_market text, r_topic text, r_seq bigint, r_type text, r_owner_lc text, r_payload jsonb, r_at timestamptz)
language plpgsql set enable_seqscan = off as $fn$
declare
  mk text[];
begin
  if p_markets is null then
    -- The ledger's markets, one index probe each (a recursive walk of the primary key), whose last
    -- seq of a topic is past that topic's mark.
    mk := array(
      with recursive m(market) as (
        (select l.market from ledger_messages l order by l.market limit 1)
        union all
        select (select l.market from ledger_messages l where l.market > m.market order by l.market limit 1) from m where m.market is not null
      )
      select m.market from m
      where m.market is not null and exists (
        select 1 from (values ('orders'), ('trades')) as tp(topic)
        where coalesce((select max(l.seq) from ledger_messages l where l.market = m.market and l.topic = tp.topic), 0)
          > coalesce((select p.seq from ledger_published p where p.market = m.market and p.topic = tp.topic), 0))
      limit 100);
  else
    mk := p_markets;
  end if;
  mk := array(select u.m from unnest(mk) as u(m) where pg_try_advisory_xact_lock(hashtext('ledger:' || u.m)));
  -- The marks need not wait for their WAL to reach the disk: lost in a crash of PostgreSQL, they
  -- would only send their rows again (at least once, as a relay that dies between its send and
  -- its commit does), never lose one; the rows themselves were committed by their books.
  perform set_config('synchronous_commit', 'off', true);
  if cardinality(mk) = 0 then
    return;
  end if;
  return query
    with pairs as materialized (
      select k.m as market, tp.topic,
        coalesce((select p.seq from ledger_published p where p.market = k.m and p.topic = tp.topic), 0) as done
      from unnest(mk) as k(m) cross join (values ('orders'::text), ('trades'::text)) as tp(topic)
    ), taken as materialized (
      select l.market, l.topic, l.seq, l.type, l.owner_lc, l.payload, l.at
      from pairs c cross join lateral (
        select x.* from ledger_messages x where x.market = c.market and x.topic = c.topic and x.seq > c.done order by x.seq limit p_limit
      ) l
      order by l.market, l.topic, l.seq limit p_limit
    ), marked as (
      insert into ledger_published (market, topic, seq)
        select t.market, t.topic, max(t.seq) from taken t group by t.market, t.topic
      on conflict (market, topic) do update set seq = excluded.seq where ledger_published.seq < excluded.seq
    )
    select t.market::text, t.topic::text, t.seq, t.type::text, t.owner_lc::text, t.payload, t.at from taken t;
end
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop view if exists ledger_unpublished;`);
    this.addSql(`alter table "ledger_messages" add column "published" boolean not null default false;`);
    this.addSql(
      `update ledger_messages l set published = true from ledger_published p where p.market = l.market and p.topic = l.topic and l.seq <= p.seq;`,
    );
    this.addSql(`create index "ledger_messages_unpublished_idx" on "ledger_messages" ("market", "topic", "seq") where not "published";`);
    this.addSql(`drop table if exists "ledger_published";`);
    // The functions as Migration20261129100000 and Migration20261201110000 left them.
    this.addSql(`create or replace function ledger_append(p_rows jsonb) returns void language plpgsql as $fn$
begin
  insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at, published)
    select t.market, t.topic,
      coalesce((select max(l.seq) from ledger_messages l where l.market = t.market and l.topic = t.topic), 0)
        + row_number() over (partition by t.market, t.topic order by t.ord),
      t.type, t.owner_lc, t.payload, t.at, false
    from jsonb_to_recordset(p_rows) as t(market text, topic text, type text, owner_lc text, payload jsonb, at timestamptz, ord int);
end
$fn$;`);
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
}

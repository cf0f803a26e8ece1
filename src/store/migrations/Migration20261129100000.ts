import { Migration } from '@mikro-orm/migrations';

/**
 * A commit's bookkeeping as one function (src/store/runtime-store.ts, `bookkeeping`): the fence,
 * the input journal, snapshots, the command inbox and forwarded commands. A commit sends its SQL as
 * one simple query with its values inlined, so each statement of it was parsed and planned again
 * for every commit; the data-modifying CTEs of the bookkeeping statement took longer to plan than
 * to run (215 µs against 175 per commit on PostgreSQL, measured with pg_stat_statements'
 * track_planning). A PL/pgSQL function plans its statements once per connection and keeps them.
 *
 * The same for the book's two statements of every commit (src/store/projections/ledger.ts): the
 * ledger's append, whose seq is read and assigned inside it, and the open orders' upsert.
 *
 * `runtime_commit` fails with the fence's message if a partition was not at the offset its move expects (checked
 * first, nothing else is done), then with the inbox's if a command of the batch was stored before:
 * either way the whole transaction is rolled back.
 */
export class Migration20261129100000 extends Migration {
  override name = 'Migration20261129100000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function runtime_commit(
  p_moves jsonb, p_expected int,
  p_unjournal jsonb, p_journal jsonb, p_topic text, p_partition int,
  p_snapshots jsonb, p_next bigint, p_inbox jsonb, p_forwards jsonb, p_grace_seconds int
) returns int language plpgsql as $fn$
declare
  n int;
begin
  update consumer_offsets c set next_offset = m.next, replay_from = m."from", owner = m.owner, updated_at = now()
    from jsonb_to_recordset(p_moves) as m(g text, t text, p int, next bigint, "from" bigint, owner text, expected bigint)
    where c.group_id = m.g and c.topic = m.t and c.partition = m.p and c.next_offset = m.expected;
  get diagnostics n = row_count;
  if n <> p_expected then
    raise exception 'fenced: the partition moved on';
  end if;
  -- Saved: what the journal held of these actors is in their snapshots now (before this batch's own lines).
  if p_unjournal is not null then
    delete from actor_journal j using jsonb_to_recordset(p_unjournal) as t(kind text, key text)
      where j.kind = t.kind and j.key = t.key;
  end if;
  if p_journal is not null then
    insert into actor_journal (kind, key, topic, partition, envelope, created_at)
      select t.kind, t.key, p_topic, p_partition, t.envelope, now()
      from jsonb_to_recordset(p_journal) as t(kind text, key text, envelope text, o int) order by t.o;
  end if;
  if p_snapshots is not null then
    insert into actor_snapshots (kind, key, state, topic, partition, next_offset, updated_at)
      select t.kind, t.key, t.state, p_topic, p_partition, p_next, now()
      from jsonb_to_recordset(p_snapshots) as t(kind text, key text, state jsonb)
      on conflict (kind, key) do update set state = excluded.state, topic = excluded.topic,
        partition = excluded.partition, next_offset = excluded.next_offset, updated_at = excluded.updated_at;
  end if;
  if p_inbox is not null then
    insert into command_inbox (key, reply, source_topic, source_partition, source_offset, created_at)
      select t.key, t.reply, p_topic, p_partition, t.o, now()
      from jsonb_to_recordset(p_inbox) as t(key text, reply jsonb, o bigint)
      on conflict (key) do nothing;
    get diagnostics n = row_count;
    if n <> jsonb_array_length(p_inbox) then
      raise exception 'inbox: a command of this batch was applied before';
    end if;
  end if;
  if p_forwards is not null then
    insert into outbox (topic, key, value, headers, msg_key, created_at, relay_after)
      select t.topic, t.key, t.value, t.headers, t.msg_key, now(), now() + make_interval(secs => p_grace_seconds)
      from jsonb_to_recordset(p_forwards) as t(topic text, key text, value text, headers jsonb, msg_key text);
  end if;
  return 1;
end
$fn$;`);
    this.addSql(`create or replace function ledger_append(p_rows jsonb) returns void language plpgsql as $fn$
begin
  -- One writer per market (its book's partition): the next seq of each (market, topic) is read and assigned here, gap-free.
  insert into ledger_messages (market, topic, seq, type, owner_lc, payload, at, published)
    select t.market, t.topic,
      coalesce((select max(l.seq) from ledger_messages l where l.market = t.market and l.topic = t.topic), 0)
        + row_number() over (partition by t.market, t.topic order by t.ord),
      t.type, t.owner_lc, t.payload, t.at, false
    from jsonb_to_recordset(p_rows) as t(market text, topic text, type text, owner_lc text, payload jsonb, at timestamptz, ord int);
end
$fn$;`);
    this.addSql(`create or replace function open_orders_upsert(p_rows jsonb) returns void language plpgsql as $fn$
begin
  insert into open_orders (id, market, asset_id, owner, owner_lc, side, outcome, original_size, size_matched, price, status,
      associate_trades, type, fee_rate_bps, expiration, created_at, updated_at)
    select t.id, t.market, t.asset_id, t.owner, t.owner_lc, t.side, t.outcome, t.original_size, t.size_matched, t.price, t.status,
      t.associate_trades, t.type, t.fee_rate_bps, t.expiration, t.created_at, t.updated_at
    from jsonb_to_recordset(p_rows) as t(id text, market text, asset_id text, owner text, owner_lc text, side text, outcome text,
      original_size bigint, size_matched bigint, price int, status text, associate_trades jsonb, type text, fee_rate_bps int,
      expiration bigint, created_at timestamptz, updated_at timestamptz)
    on conflict (id) do update set status = excluded.status, size_matched = excluded.size_matched,
      associate_trades = excluded.associate_trades, updated_at = excluded.updated_at;
end
$fn$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists ledger_append(jsonb);`);
    this.addSql(`drop function if exists open_orders_upsert(jsonb);`);
    this.addSql(`drop function if exists runtime_commit(jsonb, int, jsonb, jsonb, text, int, jsonb, bigint, jsonb, jsonb, int);`);
  }
}

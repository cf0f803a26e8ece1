import { Migration } from '@mikro-orm/migrations';

/**
 * The bookkeeping of several partitions' commits as one call (src/store/runtime-store.ts, group
 * commit): `runtime_commit` takes one partition's journal, snapshots and inbox, so a group of six
 * commits called it six times, and on PGlite each call's statements cost about as much again as
 * their rows (six calls of one journal line and one inbox row each: 1,150 µs; one call of six each:
 * 440 µs). Here every row carries its own topic and partition (snapshots also their offset), and one
 * call fences every move, then writes all of the group's rows, with `runtime_commit`'s checks and
 * order: the fence first (FENCED unless every partition is where its move expects), then the
 * journal lines of snapshotted actors deleted before the new ones, then the inbox (INBOX_SEEN if a
 * command was stored before). A single commit is a group of one. `runtime_commit` stays for nodes
 * of the version before during a rolling upgrade.
 */
export class Migration20261130110000 extends Migration {
  override name = 'Migration20261130110000';

  override up(): void | Promise<void> {
    this.addSql(`create or replace function runtime_commit_group(
  p_moves jsonb, p_expected int, p_unjournal jsonb, p_journal jsonb, p_snapshots jsonb, p_inbox jsonb, p_forwards jsonb,
  p_grace_seconds int
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
  if p_unjournal is not null then
    delete from actor_journal j using jsonb_to_recordset(p_unjournal) as t(kind text, key text)
      where j.kind = t.kind and j.key = t.key;
  end if;
  if p_journal is not null then
    insert into actor_journal (kind, key, topic, partition, envelope, created_at)
      select t.kind, t.key, t.t, t.p, t.envelope, now()
      from jsonb_to_recordset(p_journal) as t(kind text, key text, envelope text, t text, p int, o int) order by t.t, t.p, t.o;
  end if;
  if p_snapshots is not null then
    insert into actor_snapshots (kind, key, state, topic, partition, next_offset, updated_at)
      select t.kind, t.key, t.state, t.t, t.p, t.next, now()
      from jsonb_to_recordset(p_snapshots) as t(kind text, key text, state jsonb, t text, p int, next bigint)
      on conflict (kind, key) do update set state = excluded.state, topic = excluded.topic,
        partition = excluded.partition, next_offset = excluded.next_offset, updated_at = excluded.updated_at;
  end if;
  if p_inbox is not null then
    insert into command_inbox (key, reply, source_topic, source_partition, source_offset, created_at)
      select t.key, t.reply, t.t, t.p, t.o, now()
      from jsonb_to_recordset(p_inbox) as t(key text, reply jsonb, t text, p int, o bigint)
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
  }

  override down(): void | Promise<void> {
    this.addSql(`drop function if exists runtime_commit_group(jsonb, int, jsonb, jsonb, jsonb, jsonb, jsonb, int);`);
  }
}

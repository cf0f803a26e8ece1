import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox carries forwarded commands (issue 15): a command an actor hands on to another key
 * keeps its asker's reply headers (`headers`), is named by its idempotency key (`msg_key`) and is
 * sent by the partition worker itself right after the commit, which then deletes its row; the relay
 * takes such a row only once it is due (`relay_after`), that is when the worker could not send it.
 * Rows of before (a batch's releases, confirmations) are due at once, as ever.
 *
 * And the input journal of a bus that keeps no log (the in-process bus): the commands that changed
 * an actor since its last snapshot, so that snapshots are checkpointed (every few batches or
 * seconds) instead of written with every batch; an actor loads as its snapshot plus its journal.
 */
export class Migration20261128100000 extends Migration {
  override name = 'Migration20261128100000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "outbox" add column "headers" jsonb null, add column "msg_key" varchar(255) null, add column "relay_after" timestamptz not null default now();`,
    );
    this.addSql(`create index "outbox_msg_key_index" on "outbox" ("msg_key") where "msg_key" is not null;`);
    this.addSql(
      `create table "actor_journal" ("id" bigserial primary key, "kind" varchar(255) not null, "key" varchar(255) not null, "topic" varchar(255) not null, "partition" int not null, "envelope" text not null, "created_at" timestamptz not null default now());`,
    );
    this.addSql(`create index "actor_journal_kind_key_id_index" on "actor_journal" ("kind", "key", "id");`);
    this.addSql(`create index "actor_journal_topic_partition_index" on "actor_journal" ("topic", "partition");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "actor_journal";`);
    this.addSql(`drop index if exists "outbox_msg_key_index";`);
    this.addSql(`alter table "outbox" drop column "headers", drop column "msg_key", drop column "relay_after";`);
  }
}

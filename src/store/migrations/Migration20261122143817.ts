import { Migration } from '@mikro-orm/migrations';

export class Migration20261122143817 extends Migration {
  override name = 'Migration20261122143817';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "ledger_messages" ("market" varchar(255) not null, "topic" varchar(16) not null, "seq" bigint not null, "type" varchar(32) not null, "owner_lc" varchar(255) null, "payload" jsonb not null, "at" timestamptz not null, "published" boolean not null default false, primary key ("market", "topic", "seq"));`,
    );
    this.addSql(`create index "ledger_messages_unpublished_idx" on "ledger_messages" ("market", "topic", "seq") where not "published";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "ledger_messages" cascade;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

export class Migration20261122141631 extends Migration {
  override name = 'Migration20261122141631';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "outbox" ("id" bigserial primary key, "topic" varchar(255) not null, "key" varchar(255) not null, "value" text not null, "created_at" timestamptz not null);`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "outbox" cascade;`);
  }
}

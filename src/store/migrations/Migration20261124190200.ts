import { Migration } from '@mikro-orm/migrations';

/**
 * Event identity (issue 19): one (signature, position among the transaction's events) is one
 * event. The webhook's ingest claims each identity with the SHA-256 of the event's bytes; a later
 * delivery of the same identity with other bytes is dead-lettered (`conflicting_event`) instead of
 * being applied as a new fact.
 */
export class Migration20261124190200 extends Migration {
  override name = 'Migration20261124190200';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "parlay_event_identities" ("signature" varchar(88) not null, "event_index" int not null, "content_hash" varchar(64) not null, "created_at" timestamptz not null, primary key ("signature", "event_index"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "parlay_event_identities" cascade;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * Dead letters an operator can replay (`parlay-clob-ops replay-dead-letters`): the key of the record
 * a runtime dead letter came from (re-sent with it, to the same partition), and when it was
 * replayed (the row stays: a rebuild must still skip the record at its old offset).
 */
export class Migration20261124100000 extends Migration {
  override name = 'Migration20261124100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "dead_letters" add column "record_key" text null, add column "replayed_at" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "dead_letters" drop column "record_key", drop column "replayed_at";`);
  }
}

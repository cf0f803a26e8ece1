import { Migration } from '@mikro-orm/migrations';

/**
 * The inbox pruner (src/store/inbox-pruner.ts) deletes answered commands past their retention in
 * age order: an index on `created_at` keeps each pass to the rows it deletes.
 */
export class Migration20261125190000 extends Migration {
  override name = 'Migration20261125190000';

  override up(): void | Promise<void> {
    this.addSql(`create index "command_inbox_created_at_idx" on "command_inbox" ("created_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "command_inbox_created_at_idx";`);
  }
}

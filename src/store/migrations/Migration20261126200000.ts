import { Migration } from '@mikro-orm/migrations';

/**
 * The settlement executor's lease (issue 17): a step takes a trade for a bounded time in a short
 * transaction (`lease_owner`, a token of that step; `lease_until`), does its RPC calls with no
 * transaction open, and records what it decided in another short transaction only while the lease
 * is still its own (src/settlement/README.md).
 */
export class Migration20261126200000 extends Migration {
  override name = 'Migration20261126200000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "settlements" add column "lease_owner" varchar(64) null, add column "lease_until" timestamptz null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "settlements" drop column "lease_owner", drop column "lease_until";`);
  }
}

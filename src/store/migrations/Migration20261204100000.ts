import { Migration } from '@mikro-orm/migrations';

/**
 * What the book clock looks for each second (src/clob/book-clock.ts): GTD orders past their
 * expiration and delayed orders. Partial indexes hold those orders alone, so a GTC order's write
 * costs nothing more, and the clock's probes read only what is due instead of every live order.
 */
export class Migration20261204100000 extends Migration {
  override up(): void | Promise<void> {
    this.addSql(
      `create index if not exists "open_orders_expiring_idx" on "open_orders" ("expiration") where "status" in ('LIVE', 'DELAYED') and "expiration" > 0;`,
    );
    this.addSql(`create index if not exists "open_orders_delayed_idx" on "open_orders" ("market") where "status" = 'DELAYED';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "open_orders_expiring_idx";`);
    this.addSql(`drop index if exists "open_orders_delayed_idx";`);
  }
}

import { Migration } from '@mikro-orm/migrations';

export class Migration20261122142143 extends Migration {
  override name = 'Migration20261122142143';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "open_orders" ("id" varchar(255) not null, "market" varchar(255) not null, "asset_id" varchar(255) not null, "owner" varchar(255) not null, "owner_lc" varchar(255) not null, "side" varchar(4) not null, "outcome" varchar(3) not null, "original_size" bigint not null, "size_matched" bigint not null, "price" int not null, "status" varchar(16) not null, "associate_trades" jsonb not null, "type" varchar(3) not null, "fee_rate_bps" int not null, "expiration" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "open_orders_owner_market_idx" on "open_orders" ("owner_lc", "market", "status");`);
    this.addSql(`create index "open_orders_market_status_idx" on "open_orders" ("market", "status");`);

    this.addSql(
      `create table "trades" ("id" varchar(255) not null, "taker_order_id" varchar(255) not null, "market" varchar(255) not null, "asset_id" varchar(255) not null, "side" varchar(4) not null, "outcome" varchar(3) not null, "size" bigint not null, "price" int not null, "notional" bigint not null, "fee_rate_bps" int not null, "fee" bigint not null, "status" varchar(16) not null, "match_type" varchar(16) not null, "match_time" timestamptz not null, "last_update" timestamptz not null, "owner" varchar(255) not null, "maker_address" varchar(255) not null, "transaction_hash" varchar(255) not null default '', "maker_orders" jsonb not null, primary key ("id"));`,
    );
    this.addSql(`create index "trades_market_time_idx" on "trades" ("market", "match_time" desc);`);

    this.addSql(
      `create table "trade_parties" ("trade_id" varchar(255) not null, "address_lc" varchar(255) not null, "role" varchar(5) not null, "market" varchar(255) not null, "asset_id" varchar(255) not null, "match_time" timestamptz not null, primary key ("trade_id", "address_lc", "role"));`,
    );
    this.addSql(`create index "trade_parties_address_time_idx" on "trade_parties" ("address_lc", "match_time" desc);`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "open_orders" cascade;`);
    this.addSql(`drop table if exists "trades" cascade;`);
    this.addSql(`drop table if exists "trade_parties" cascade;`);
  }
}

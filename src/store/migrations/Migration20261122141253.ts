import { Migration } from '@mikro-orm/migrations';

export class Migration20261122141253 extends Migration {
  override name = 'Migration20261122141253';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "auth_signins" ("address" varchar(255) not null, "timestamp" bigint not null, "created_at" timestamptz not null, primary key ("address", "timestamp"));`,
    );

    this.addSql(
      `create table "markets" ("condition_id" varchar(255) not null, "question" text not null default '', "yes_token_id" varchar(255) not null, "no_token_id" varchar(255) not null, "tick_size" bigint not null, "min_size" bigint not null, "taker_fee_bps" int not null, "start_time" timestamptz null, "delay_ms" int not null default 0, "status" varchar(16) not null, "on_chain_market_id" bigint null, "market_address" varchar(255) null, "reference_price" bigint null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("condition_id"));`,
    );
    this.addSql(`alter table "markets" add constraint "markets_on_chain_market_id_unique" unique ("on_chain_market_id");`);
    this.addSql(`create index "markets_yes_token_idx" on "markets" ("yes_token_id");`);
    this.addSql(`create index "markets_no_token_idx" on "markets" ("no_token_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "auth_signins" cascade;`);
    this.addSql(`drop table if exists "markets" cascade;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

// The settlement executor's durable state: one row per trade, one per signed transaction attempt
// (persisted before it is sent, so that a restarted executor asks the chain about it first).
export class Migration20261123100000 extends Migration {
  override name = 'Migration20261123100000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "settlements" ("trade_id" varchar(255) not null, "market" varchar(255) not null, "status" varchar(16) not null, "attempts" int not null default 0, "cu_limit" int not null, "cu_price" bigint not null, "signature" varchar(128) null, "reason" text null, "culprits" jsonb not null default '[]', "reconciled" boolean not null default false, "next_at" timestamptz not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("trade_id"));`,
    );
    this.addSql(
      `create index "settlements_pending_idx" on "settlements" ("next_at") where "status" not in ('CONFIRMED', 'FAILED') or not "reconciled";`,
    );
    this.addSql(
      `create table "settlement_attempts" ("trade_id" varchar(255) not null, "attempt" int not null, "signature" varchar(128) not null, "tx" text not null, "blockhash" varchar(64) not null, "last_valid_block_height" bigint not null, "cu_limit" int not null, "cu_price" bigint not null, "outcome" varchar(32) null, "created_at" timestamptz not null, primary key ("trade_id", "attempt"));`,
    );
    this.addSql(`create unique index "settlement_attempts_signature_idx" on "settlement_attempts" ("signature");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "settlement_attempts" cascade;`);
    this.addSql(`drop table if exists "settlements" cascade;`);
  }
}

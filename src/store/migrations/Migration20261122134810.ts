import { Migration } from '@mikro-orm/migrations';

export class Migration20261122134810 extends Migration {
  override name = 'Migration20261122134810';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "actor_snapshots" ("kind" varchar(255) not null, "key" varchar(255) not null, "state" jsonb not null, "topic" varchar(255) not null, "partition" int not null, "next_offset" bigint not null, "updated_at" timestamptz not null, primary key ("kind", "key"));`,
    );

    this.addSql(
      `create table "users" ("id" varchar(255) not null, "wallet" varchar(255) null, "is_superuser" boolean not null default false, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "users_wallet_lower_idx" on "users" (lower("wallet"));`);

    this.addSql(
      `create table "command_inbox" ("key" varchar(255) not null, "reply" jsonb not null, "created_at" timestamptz not null, primary key ("key"));`,
    );

    this.addSql(
      `create table "consumer_offsets" ("group_id" varchar(255) not null, "topic" varchar(255) not null, "partition" int not null, "next_offset" bigint not null, "owner" varchar(255) not null, "updated_at" timestamptz not null, primary key ("group_id", "topic", "partition"));`,
    );

    this.addSql(
      `create table "dead_letters" ("id" bigserial primary key, "source" varchar(255) not null, "reason" text not null, "payload" text not null, "created_at" timestamptz not null);`,
    );
    this.addSql(`alter table "dead_letters" add constraint "dead_letters_source_unique" unique ("source");`);

    this.addSql(
      `create table "parlays" ("parlay_id" bigint not null, "id" uuid not null, "user_wallet" varchar(255) not null, "stake" bigint not null, "combined_probability" bigint not null, "potential_payout" bigint not null, "actual_payout" bigint not null, "status" varchar(16) not null, "legs_total" int not null, "legs_won" int not null, "legs_lost" int not null, "legs_resolved" int not null, "tx_signature" varchar(255) not null, "claim_tx_signature" varchar(255) not null default '', "created_at" timestamptz not null, "settled_at" timestamptz null, "claimed_at" timestamptz null, primary key ("parlay_id"));`,
    );
    this.addSql(`create index "parlays_wallet_status_idx" on "parlays" (lower("user_wallet"), "status", "created_at" desc);`);
    this.addSql(`create index "parlays_status_created_idx" on "parlays" ("status", "created_at" desc);`);
    this.addSql(`create index "parlays_created_idx" on "parlays" ("created_at" desc);`);

    this.addSql(
      `create table "parlay_legs" ("parlay_id" bigint not null, "leg_index" int not null, "on_chain_market_id" bigint not null, "market_address" varchar(255) not null, "selected_outcome" varchar(8) not null, "probability_at_entry" int not null, "status" varchar(16) not null, "resolved_at" timestamptz null, primary key ("parlay_id", "leg_index"));`,
    );
    this.addSql(`create index "parlay_legs_market_status_idx" on "parlay_legs" ("on_chain_market_id", "status");`);
    this.addSql(`alter table "parlay_legs" add constraint "parlay_legs_parlay_market_uniq" unique ("parlay_id", "on_chain_market_id");`);

    this.addSql(
      `create table "program_config" ("id" serial primary key, "authority" varchar(255) not null, "collateral_mint" varchar(255) not null, "vault" varchar(255) not null, "max_legs" int not null, "min_stake" bigint not null, "max_stake" bigint not null, "max_payout_cap" bigint not null, "exposure_ratio_bps" int not null, "house_edge_bps" int not null, "paused" boolean not null, "slot" bigint not null, "updated_at" timestamptz not null);`,
    );

    this.addSql(
      `create table "vault" ("id" serial primary key, "vault_address" varchar(255) not null default '', "balance" bigint not null default '0', "total_staked" bigint not null default '0', "total_paid_out" bigint not null default '0', "total_exposure" bigint not null default '0', "max_payout_cap" bigint not null default '0', "max_legs" int not null default 0, "min_stake" bigint not null default '0', "max_stake" bigint not null default '0', "is_active" boolean not null default true, "updated_at" timestamptz not null);`,
    );
  }
}

import { Migration } from '@mikro-orm/migrations';

export class Migration20261123300000 extends Migration {
  override name = 'Migration20261123300000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "clob_heartbeats" ("wallet" varchar(255) not null, "owner_lc" varchar(255) not null, "state" varchar(16) not null, "timeout_ms" int not null, "last_seen_at" timestamptz not null, "expires_at" timestamptz not null, "beats" bigint not null default 0, "claimed_by" varchar(255) null, "claimed_at" timestamptz null, "expired_at" timestamptz null, "cancelled" int not null default 0, "created_at" timestamptz not null, primary key ("wallet"));`,
    );
    this.addSql(`create index "clob_heartbeats_due_idx" on "clob_heartbeats" ("expires_at") where "state" in ('armed', 'expiring');`);
    this.addSql(
      `create table "ops_jobs" ("id" varchar(255) not null, "kind" varchar(64) not null, "status" varchar(16) not null, "params" jsonb not null, "state" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create table "ops_job_items" ("job_id" varchar(255) not null, "seq" int not null, "item" jsonb not null, "done" boolean not null default false, primary key ("job_id", "seq"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "clob_heartbeats" cascade;`);
    this.addSql(`drop table if exists "ops_jobs" cascade;`);
    this.addSql(`drop table if exists "ops_job_items" cascade;`);
  }
}

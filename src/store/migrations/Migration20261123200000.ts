import { Migration } from '@mikro-orm/migrations';

// Parlay templates (issue 7): curated combos with their legs, and the suggestions read model.
export class Migration20261123200000 extends Migration {
  override name = 'Migration20261123200000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "parlay_templates" ("id" bigserial primary key, "name" varchar(200) not null, "description" text not null default '', "display_order" int not null default 0, "is_active" boolean not null default true, "combined_probability" bigint null, "payout_per_unit" bigint null, "house_edge_bps" int null, "stale" boolean not null default false, "stale_reason" text null, "refreshed_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "parlay_templates_display_idx" on "parlay_templates" ("is_active", "display_order", "id");`);
    this.addSql(
      `create table "parlay_template_legs" ("template_id" bigint not null, "leg_index" int not null, "condition_id" varchar(66) null, "demo_market_id" bigint null, "demo_question" text null, "selected_outcome" varchar(8) not null, "probability" int null, "probability_source" varchar(16) null, primary key ("template_id", "leg_index"));`,
    );
    this.addSql(
      `alter table "parlay_template_legs" add constraint "parlay_template_legs_market_uniq" unique ("template_id", "condition_id");`,
    );
    this.addSql(
      `alter table "parlay_template_legs" add constraint "parlay_template_legs_demo_uniq" unique ("template_id", "demo_market_id");`,
    );
    this.addSql(`create index "parlay_template_legs_condition_idx" on "parlay_template_legs" ("condition_id");`);
    this.addSql(
      `create table "parlay_suggestions" ("id" int not null, "payload" text not null, "etag" varchar(80) not null, "valid_until" timestamptz null, "built_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`insert into "parlay_suggestions" ("id", "payload", "etag", "valid_until", "built_at") values (1, '[]', '', null, now());`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "parlay_suggestions" cascade;`);
    this.addSql(`drop table if exists "parlay_template_legs" cascade;`);
    this.addSql(`drop table if exists "parlay_templates" cascade;`);
  }
}

import { Migration } from '@mikro-orm/migrations';

/**
 * Checkpointed snapshots: a partition's actors may be newer in memory than in `actor_snapshots`.
 * `consumer_offsets.replay_from` is where recovery must start reading to rebuild them, and every
 * inbox row names the record that first applied it, so that a replay applies exactly what was
 * applied the first time (a later duplicate of the same id was answered, not applied).
 */
export class Migration20261123500000 extends Migration {
  override name = 'Migration20261123500000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "consumer_offsets" add column "replay_from" bigint null;`);
    this.addSql(
      `alter table "command_inbox" add column "source_topic" varchar(255) null, add column "source_partition" int null, add column "source_offset" bigint null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "consumer_offsets" drop column "replay_from";`);
    this.addSql(`alter table "command_inbox" drop column "source_topic", drop column "source_partition", drop column "source_offset";`);
  }
}

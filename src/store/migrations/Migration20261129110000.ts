import { Migration } from '@mikro-orm/migrations';

/**
 * Actor snapshots (a book's state is tens of KB of JSON) are compressed with lz4 where the server
 * has it, instead of pglz: a snapshot write costs about half (2,460 book and wallet states from the
 * order bench: 875 → 330 ms to insert, 31 → 27 MB). A server without lz4 (PGlite) stores them
 * uncompressed out of line instead (400 ms, 72 MB): a snapshot is written every few seconds per
 * changed actor and read once at a takeover, so CPU matters more than its size.
 */
export class Migration20261129110000 extends Migration {
  override name = 'Migration20261129110000';

  override up(): void | Promise<void> {
    this.addSql(`do $do$
begin
  alter table actor_snapshots alter column state set compression lz4;
exception when feature_not_supported or invalid_parameter_value then
  alter table actor_snapshots alter column state set storage external;
end
$do$;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table actor_snapshots alter column state set compression default, alter column state set storage extended;`);
  }
}

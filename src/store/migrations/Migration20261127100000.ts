import { Migration } from '@mikro-orm/migrations';

/**
 * The Parlay actor's state lives in its own rows (issue 16): the positions its status, leg counters
 * and payout were last moved by (`positions`, [status, counters, payout], each [slot, index, event]
 * or null) and whether it was voided; status, legs and the claim are already columns. Its snapshot
 * rows go: a parlay's state is loaded from `parlays` + `parlay_legs` when a command needs it.
 * Existing parlays take their positions from their snapshots; one without a snapshot (changed in
 * memory only when the old version stopped) keeps null positions, which any later event passes.
 */
export class Migration20261127100000 extends Migration {
  override name = 'Migration20261127100000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "parlays" add column "positions" jsonb null, add column "voided" boolean not null default false;`);
    this.addSql(`update "parlays" p set "positions" = jsonb_build_array(s.state->'statusPos', s.state->'countersPos', s.state->'payoutPos'),
      "voided" = coalesce((s.state->>'voided')::boolean, false)
      from "actor_snapshots" s where s.kind = 'parlay' and s.key = p.parlay_id::text;`);
    this.addSql(`update "parlays" set "voided" = true where "status" = 'refunded' and "positions" is null;`);
    this.addSql(`delete from "actor_snapshots" where "kind" = 'parlay';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "parlays" drop column "positions", drop column "voided";`);
  }
}

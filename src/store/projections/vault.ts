// Writes the Vault actor's state into the single-row vault and program_config read models.
import type { Applied, StoreTx } from '../../runtime/types.ts';
import type { VaultEvent, VaultState } from '../../../actors/vault/decider.ts';

export async function projectVault(tx: StoreTx, applied: Applied<unknown, VaultEvent, VaultState>[]): Promise<void> {
  if (!applied.length) return;
  const s = applied[applied.length - 1].state;
  const at = new Date(s.updatedAt || Date.now()).toISOString();
  await tx.execute(
    `insert into vault (id, vault_address, balance, total_staked, total_paid_out, total_exposure, max_payout_cap, max_legs,
       min_stake, max_stake, is_active, updated_at) values (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do update set vault_address = excluded.vault_address, balance = excluded.balance,
       total_staked = excluded.total_staked, total_paid_out = excluded.total_paid_out, total_exposure = excluded.total_exposure,
       max_payout_cap = excluded.max_payout_cap, max_legs = excluded.max_legs, min_stake = excluded.min_stake,
       max_stake = excluded.max_stake, is_active = excluded.is_active, updated_at = excluded.updated_at`,
    [
      s.vaultAddress.v,
      s.balance.v,
      s.totalStaked.v,
      s.totalPaidOut.v,
      s.totalExposure.v,
      s.maxPayoutCap.v,
      s.maxLegs.v,
      s.minStake.v,
      s.maxStake.v,
      s.isActive.v,
      at,
    ],
  );
  const c = s.config;
  if (!c) return;
  await tx.execute(
    `insert into program_config (id, authority, collateral_mint, vault, max_legs, min_stake, max_stake, max_payout_cap,
       exposure_ratio_bps, house_edge_bps, paused, slot, updated_at) values (1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (id) do update set authority = excluded.authority, collateral_mint = excluded.collateral_mint,
       vault = excluded.vault, max_legs = excluded.max_legs, min_stake = excluded.min_stake, max_stake = excluded.max_stake,
       max_payout_cap = excluded.max_payout_cap, exposure_ratio_bps = excluded.exposure_ratio_bps,
       house_edge_bps = excluded.house_edge_bps, paused = excluded.paused, slot = excluded.slot, updated_at = excluded.updated_at`,
    [
      c.authority,
      c.collateralMint,
      c.vault,
      c.maxLegs,
      c.minStake,
      c.maxStake,
      c.maxPayoutCap,
      c.exposureRatioBps,
      c.houseEdgeBps,
      c.paused,
      c.pos[0],
      at,
    ],
  );
}

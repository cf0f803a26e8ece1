// Account state of the emulated parlay program, encoded with Anchor's Borsh coder:
// - ParlayAccount: the IDL's own account type;
// - ConfigAccount: not in the IDL (the program's config/vault state is private to it), so it is
//   declared here in a small IDL extension that reuses the IDL's ConfigFields type.
// Also the event encoding Anchor's emit! uses: base64(discriminator ‖ borsh(event)).
import { BN, BorshCoder, type Idl } from '@coral-xyz/anchor';
import { PublicKey } from '@solana/web3.js';
import { createHash } from 'node:crypto';
import { coder, idl } from '../../idl.ts';
import { legToIdl, decodeParlayAccount, type ParlayAccountData } from '../../program.ts';

const accountDiscriminator = (name: string) => [...createHash('sha256').update(`account:${name}`).digest().subarray(0, 8)];

const configFieldsType = idl.types!.find((t) => t.name === 'ConfigFields')!;

const localIdl: Idl = {
  address: idl.address,
  metadata: { name: 'parlay_local_state', version: '0.1.0', spec: '0.1.0' },
  instructions: [],
  accounts: [{ name: 'ConfigAccount', discriminator: accountDiscriminator('ConfigAccount') }],
  types: [
    configFieldsType,
    {
      name: 'ConfigAccount',
      type: {
        kind: 'struct',
        fields: [
          { name: 'config', type: { defined: { name: 'ConfigFields' } } },
          { name: 'total_staked', type: 'u64' },
          { name: 'total_paid_out', type: 'u64' },
          { name: 'total_exposure', type: 'u64' },
          { name: 'bump', type: 'u8' },
          { name: 'vault_bump', type: 'u8' },
          { name: 'vault_authority_bump', type: 'u8' },
        ],
      },
    },
  ],
};
const localCoder = new BorshCoder(localIdl);
const CONFIG_DISC = Buffer.from(localIdl.accounts![0].discriminator);
const PARLAY_DISC = Buffer.from(idl.accounts!.find((a) => a.name === 'ParlayAccount')!.discriminator);

export interface ConfigState {
  authority: PublicKey;
  collateralMint: PublicKey;
  vault: PublicKey;
  maxLegs: number;
  minStake: bigint;
  maxStake: bigint;
  maxPayoutCap: bigint;
  exposureRatioBps: number;
  houseEdgeBps: number;
  paused: boolean;
  totalStaked: bigint;
  totalPaidOut: bigint;
  totalExposure: bigint;
  bump: number;
  vaultBump: number;
  vaultAuthorityBump: number;
}

export type ParlayState = ParlayAccountData;

export const bn = (v: bigint | number) => new BN(BigInt(v).toString());
const big = (v: { toString(): string }) => BigInt(v.toString());

/** ConfigFields in the IDL's shape (for events and the config account). */
export function configFields(c: ConfigState) {
  return {
    authority: c.authority,
    collateral_mint: c.collateralMint,
    vault: c.vault,
    max_legs: c.maxLegs,
    min_stake: bn(c.minStake),
    max_stake: bn(c.maxStake),
    max_payout_cap: bn(c.maxPayoutCap),
    exposure_ratio_bps: c.exposureRatioBps,
    house_edge_bps: c.houseEdgeBps,
    paused: c.paused,
  };
}

export function encodeConfig(c: ConfigState): Buffer {
  const body = localCoder.types.encode('ConfigAccount', {
    config: configFields(c),
    total_staked: bn(c.totalStaked),
    total_paid_out: bn(c.totalPaidOut),
    total_exposure: bn(c.totalExposure),
    bump: c.bump,
    vault_bump: c.vaultBump,
    vault_authority_bump: c.vaultAuthorityBump,
  });
  return Buffer.concat([CONFIG_DISC, body]);
}

export function isConfigAccount(data: Buffer): boolean {
  return data.length >= 8 && data.subarray(0, 8).equals(CONFIG_DISC);
}

export function decodeConfig(data: Buffer): ConfigState {
  const raw = localCoder.types.decode('ConfigAccount', data.subarray(8));
  const f = raw.config;
  return {
    authority: f.authority,
    collateralMint: f.collateral_mint,
    vault: f.vault,
    maxLegs: f.max_legs,
    minStake: big(f.min_stake),
    maxStake: big(f.max_stake),
    maxPayoutCap: big(f.max_payout_cap),
    exposureRatioBps: f.exposure_ratio_bps,
    houseEdgeBps: f.house_edge_bps,
    paused: f.paused,
    totalStaked: big(raw.total_staked),
    totalPaidOut: big(raw.total_paid_out),
    totalExposure: big(raw.total_exposure),
    bump: raw.bump,
    vaultBump: raw.vault_bump,
    vaultAuthorityBump: raw.vault_authority_bump,
  };
}

export const CONFIG_ACCOUNT_SIZE = encodeConfig({
  authority: PublicKey.default,
  collateralMint: PublicKey.default,
  vault: PublicKey.default,
  maxLegs: 0,
  minStake: 0n,
  maxStake: 0n,
  maxPayoutCap: 0n,
  exposureRatioBps: 0,
  houseEdgeBps: 0,
  paused: false,
  totalStaked: 0n,
  totalPaidOut: 0n,
  totalExposure: 0n,
  bump: 0,
  vaultBump: 0,
  vaultAuthorityBump: 0,
}).length;

export function encodeParlay(p: ParlayState): Buffer {
  const body = coder.types.encode('ParlayAccount', {
    parlay_id: bn(p.parlayId),
    user: p.user,
    stake: bn(p.stake),
    combined_probability: bn(p.combinedProbability),
    potential_payout: bn(p.potentialPayout),
    actual_payout: bn(p.actualPayout),
    status: p.status,
    legs: p.legs.map(legToIdl),
    leg_status: Buffer.from(p.legStatus),
    created_at: bn(p.createdAt),
    bump: p.bump,
  });
  return Buffer.concat([PARLAY_DISC, body]);
}

export function isParlayAccount(data: Buffer): boolean {
  return data.length >= 8 && data.subarray(0, 8).equals(PARLAY_DISC);
}

export const decodeParlay = (data: Buffer): ParlayState => decodeParlayAccount(data);

/** The `Program data:` payload of an event, as Anchor's emit! writes it. */
export function encodeEvent(name: string, data: object): string {
  const ev = idl.events!.find((e) => e.name === name);
  if (!ev) throw new Error(`unknown event ${name}`);
  return Buffer.concat([Buffer.from(ev.discriminator), coder.types.encode(name, data)]).toString('base64');
}

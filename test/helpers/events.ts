// Builds webhook transactions carrying program events encoded with Anchor's coder (bench input).
import { createHash } from 'node:crypto';
import { Keypair, PublicKey } from '@solana/web3.js';
import { BN } from '@coral-xyz/anchor';
import bs58 from 'bs58';
import { coder, idl, PARLAY_PROGRAM_ID } from '../../src/chain/idl.ts';

export function eventLine(name: string, data: Record<string, unknown>): string {
  const ev = idl.events!.find((e) => e.name === name)!;
  const body = coder.types.encode(name, data);
  return `Program data: ${Buffer.concat([Buffer.from(ev.discriminator), body]).toString('base64')}`;
}

const labels = new Map<string, string>();

/** A transaction signature (base58 of 64 bytes, as the webhook requires) named by a label: the same label, the same signature. */
export function sig(label: string): string {
  const s = bs58.encode(createHash('sha512').update(label).digest());
  if (labels.size >= 100_000) labels.clear(); // benchmarks make millions; tests look up a few
  labels.set(s, label);
  return s;
}

/** The label a signature of `sig` was made from. */
export const labelOf = (signature: string): string | undefined => labels.get(signature);

/** A landed transaction of the program whose signature is `sig(label)`. */
export function rawTx(label: string, slot: number, lines: string[]) {
  const pid = PARLAY_PROGRAM_ID.toBase58();
  return {
    slot,
    blockTime: 1_763_719_200 + slot,
    indexWithinBlock: 0,
    meta: {
      err: null,
      fee: 5000,
      logMessages: [`Program ${pid} invoke [1]`, 'Program log: Instruction: CreateParlay', ...lines, `Program ${pid} success`],
    },
    transaction: { signatures: [sig(label)], message: { accountKeys: [pid] } },
  };
}

const markets = Array.from({ length: 64 }, () => Keypair.generate().publicKey);

export function parlayCreated(parlayId: number, user: PublicKey, slot: number) {
  const legs = [0, 1, 2].map((i) => ({
    market_id: new BN(1000 + ((parlayId + i * 7) % 64)),
    market: markets[(parlayId + i * 7) % 64],
    outcome: i % 2,
    probability: 500_000,
  }));
  return eventLine('ParlayCreated', {
    parlay_id: new BN(parlayId),
    user,
    stake: new BN(10_000_000),
    combined_probability: new BN(125_000_000_000),
    potential_payout: new BN(78_400_000),
    legs,
    vault_balance: new BN(100_000_000_000 + parlayId),
    total_staked: new BN(parlayId * 10_000_000),
    total_exposure: new BN(parlayId),
    created_at: new BN(1_763_719_200 + parlayId),
  });
}

/** LegSettled of `leg` with the parlay's state after it. */
export function legSettled(
  parlayId: number,
  leg: number,
  legStatus: number,
  parlayStatus: number,
  resolved: number,
  won: number,
  lost: number,
  payout: number,
  slot: number,
) {
  return eventLine('LegSettled', {
    parlay_id: new BN(parlayId),
    leg_index: leg,
    market_id: new BN(1000 + leg),
    leg_status: legStatus,
    parlay_status: parlayStatus,
    legs_won: won,
    legs_lost: lost,
    legs_resolved: resolved,
    actual_payout: new BN(payout),
    total_exposure: new BN(slot),
    settled_at: new BN(1_763_719_200 + slot),
  });
}

export function parlayClaimed(parlayId: number, user: PublicKey, amount: number, slot: number) {
  return eventLine('ParlayClaimed', {
    parlay_id: new BN(parlayId),
    user,
    amount: new BN(amount),
    vault_balance: new BN(100_000_000_000 - slot),
    total_paid_out: new BN(slot),
    claimed_at: new BN(1_763_719_200 + slot),
  });
}

/**
 * A deterministic life for parlay `id` (3 legs): created, legs settled (won or lost), claimed when
 * won. Returns raw transactions with increasing slots starting at `slot0`.
 */
export function parlayLife(id: number, user: PublicKey, slot0: number) {
  const txs = [rawTx(`c-${id}`, slot0, [parlayCreated(id, user, slot0)])];
  const wins = id % 3 !== 0;
  let won = 0;
  for (let leg = 0; leg < 3; leg++) {
    const lost = !wins && leg === 1;
    if (lost) {
      txs.push(rawTx(`s-${id}-${leg}`, slot0 + 1 + leg, [legSettled(id, leg, 2, 2, leg + 1, won, 1, 0, slot0 + 1 + leg)]));
      return txs;
    }
    won++;
    const done = leg === 2;
    txs.push(
      rawTx(`s-${id}-${leg}`, slot0 + 1 + leg, [
        legSettled(id, leg, 1, done ? 1 : 0, leg + 1, won, 0, done ? 78_400_000 : 0, slot0 + 1 + leg),
      ]),
    );
  }
  txs.push(rawTx(`x-${id}`, slot0 + 4, [parlayClaimed(id, user, 78_400_000, slot0 + 4)]));
  return txs;
}

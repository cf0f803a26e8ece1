// The `parlay.events` topic (v1): decoded program events and parlay-side commands as zod schemas
// and their replies. Key: the parlay id (a Parlay's commands), or VAULT_KEY (the Vault's). Amounts
// are decimal strings of micro-units; a position [slot, indexWithinBlock, eventIndex] orders chain
// observations. The runtime adds the envelope's time as `at` before the vault's decider sees a command.
// On Kafka a bulk record may carry a ParlayCreated in its packed form (`packParlayCommand`).
import { z } from 'zod';
import { TOPICS, VAULT_KEY } from './names.ts';
import { checkedSchema } from './checked.ts';

/** The topic's name (before the deployment's prefix); its key is a parlay id, or VAULT_KEY. */
export const PARLAY_TOPIC = TOPICS.parlayEvents;
export { VAULT_KEY };

/**
 * Amounts and ids are u64 on chain, kept as PostgreSQL bigint (i64) by the read models: a value
 * above BIGINT_MAX cannot be stored, and a command carrying one would fail every commit of its
 * partition. Such commands are refused here (dead-lettered by the runtime), and before that at the
 * edge (the routes, the event decoder).
 */
export const BIGINT_MAX = 9223372036854775807n;
const BIGINT_MAX_TEXT = BIGINT_MAX.toString();

/** A decimal integer text from 0 to BIGINT_MAX. */
export function fitsBigint(text: string): boolean {
  // Digit strings of the same length compare as their numbers do.
  return /^\d{1,19}$/.test(text) && (text.length < 19 || text <= BIGINT_MAX_TEXT);
}

const amount = z.string().refine(fitsBigint, { error: `must be a decimal integer from 0 to ${BIGINT_MAX}` });
const pos = z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative(), z.number().int().nonnegative()]);
/** A transaction signature (base58 of 64 bytes: at most 88 characters) and an event's id, `<signature>:<index>`: bounded by the columns that store them. */
const signature = z.string().min(1).max(88);
const observed = { eventId: z.string().min(1).max(100), pos, signature };
/** A public key as base58 (at most 44 characters; the read models' columns hold 255). */
const pubkey = z.string().min(1).max(64);

export const legInput = z.object({
  marketId: amount,
  market: pubkey,
  outcome: z.number().int().min(0).max(1),
  probability: z.number().int().min(0).max(1_000_000),
});

export const parlayCommand = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ParlayCreated'),
    ...observed,
    parlayId: amount,
    user: pubkey,
    stake: amount,
    combinedProbability: amount,
    potentialPayout: amount,
    legs: z.array(legInput).min(1).max(64),
    createdAt: z.number().int(),
  }),
  z.object({
    type: z.literal('LegSettled'),
    ...observed,
    parlayId: amount,
    legIndex: z.number().int().min(0),
    marketId: amount,
    legStatus: z.number().int().min(0).max(3),
    parlayStatus: z.number().int().min(0).max(5),
    legsWon: z.number().int().min(0),
    legsLost: z.number().int().min(0),
    legsResolved: z.number().int().min(0),
    actualPayout: amount,
    settledAt: z.number().int(),
  }),
  z.object({ type: z.literal('ParlayClaimed'), ...observed, parlayId: amount, user: pubkey, amount, claimedAt: z.number().int() }),
  z.object({ type: z.literal('ParlayVoided'), ...observed, parlayId: amount, refund: amount, voidedAt: z.number().int() }),
]);

export const configFields = z.object({
  authority: pubkey,
  collateralMint: pubkey,
  vault: pubkey,
  maxLegs: z.number().int(),
  minStake: amount,
  maxStake: amount,
  maxPayoutCap: amount,
  exposureRatioBps: z.number().int(),
  houseEdgeBps: z.number().int(),
  paused: z.boolean(),
});

/** A mirrored value with the position of the observation it comes from. */
const observedAmount = z.object({ v: amount, pos });

export const vaultValues = z.object({
  balance: observedAmount.optional(),
  totalStaked: observedAmount.optional(),
  totalPaidOut: observedAmount.optional(),
  totalExposure: observedAmount.optional(),
});

export const vaultPatchFields = z.object({
  vaultAddress: z.string().optional(),
  maxLegs: z.number().int().optional(),
  maxPayoutCap: amount.optional(),
  minStake: amount.optional(),
  maxStake: amount.optional(),
  isActive: z.boolean().optional(),
});

export const vaultCommand = z.discriminatedUnion('type', [
  // The latest observation of each vault value in a delivery, coalesced by the front door.
  z.object({ type: z.literal('VaultObserved'), values: vaultValues }),
  z.object({ type: z.literal('ConfigObserved'), ...observed, config: configFields }),
  z.object({ type: z.literal('VaultPatch'), fields: vaultPatchFields }),
  z.object({ type: z.literal('VaultSynced'), balance: amount, slot: z.number().int().nonnegative() }),
]);

const PARLAY_CREATED_KEYS = [
  'type',
  'eventId',
  'pos',
  'signature',
  'parlayId',
  'user',
  'stake',
  'combinedProbability',
  'potentialPayout',
  'legs',
  'createdAt',
] as const;
const LEG_KEYS = ['marketId', 'market', 'outcome', 'probability'] as const;
const text = (v: unknown, max: number): v is string => typeof v === 'string' && v.length >= 1 && v.length <= max;
const amountText = (v: unknown): v is string => typeof v === 'string' && fitsBigint(v);
const int = (v: unknown, lo: number, hi: number) => Number.isSafeInteger(v) && (v as number) >= lo && (v as number) <= hi;
const exactly = (o: object, keys: readonly string[]) => {
  let n = 0;
  for (const k in o)
    if (!keys.includes(k)) return false;
    else n++;
  return n === keys.length;
};

/**
 * A ParlayCreated exactly as `parlayCommand` would give it back, checked by hand; else undefined.
 * Most commands of the topic are creations, and an owner reading them from Kafka parsed each with
 * zod (~11 µs an event, a tenth of a Kafka node's CPU on ingest); this check takes ~1 µs. It is
 * stricter than the schema where that is simpler (own keys only, nothing extra to strip): what it
 * refuses goes through the schema as before.
 */
export function parlayCreatedAsIs(v: unknown): ParlayCommand | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const c = v as Record<string, unknown>;
  if (c.type !== 'ParlayCreated' || !exactly(c, PARLAY_CREATED_KEYS)) return undefined;
  const pos = c.pos;
  if (!Array.isArray(pos) || pos.length !== 3 || !pos.every((x) => int(x, 0, Number.MAX_SAFE_INTEGER))) return undefined;
  if (!text(c.eventId, 100) || !text(c.signature, 88) || !text(c.user, 64)) return undefined;
  if (!amountText(c.parlayId) || !amountText(c.stake) || !amountText(c.combinedProbability) || !amountText(c.potentialPayout))
    return undefined;
  if (!int(c.createdAt, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) return undefined;
  const legs = c.legs;
  if (!Array.isArray(legs) || legs.length < 1 || legs.length > 64) return undefined;
  for (const l of legs) {
    if (typeof l !== 'object' || l === null || Array.isArray(l) || !exactly(l, LEG_KEYS)) return undefined;
    if (!amountText(l.marketId) || !text(l.market, 64) || !int(l.outcome, 0, 1) || !int(l.probability, 0, 1_000_000)) return undefined;
  }
  return c as ParlayCommand;
}

/** The tag of a ParlayCreated in its compact form (see `packParlayCommand`). */
export const PACKED_CREATION = 'PC1';

/**
 * A command as it travels in a bulk record on Kafka: a ParlayCreated as a tuple
 * `["PC1", signature, pos, parlayId, user, stake, combinedProbability, potentialPayout, createdAt,
 * [[marketId, market, outcome, probability], ...]]` (its eventId is `<signature>:<pos[2]>`, as the
 * decoder makes it), anything else as it is. The tuple is about half the JSON of the object (410
 * against 790 characters with three legs) and its text is built and parsed in a third of the time;
 * creations are most of what the webhook sends. `unpackParlayCommand` gives the object back; the
 * consumer then checks it as any other command.
 */
export function packParlayCommand(cmd: unknown): unknown {
  const c = cmd as ParlayCommand;
  if (c?.type !== 'ParlayCreated' || c.eventId !== `${c.signature}:${c.pos[2]}`) return cmd;
  const legs = c.legs.map((l) => [l.marketId, l.market, l.outcome, l.probability]);
  return [PACKED_CREATION, c.signature, c.pos, c.parlayId, c.user, c.stake, c.combinedProbability, c.potentialPayout, c.createdAt, legs];
}

/**
 * The command a packed form stands for (`packParlayCommand`); any other value as it is. Only the
 * shape of the tuple is read here: the object it gives is checked by the topic's schema like any
 * command (a tuple of the wrong length or with a leg that is not an array is left as it is, and the
 * schema refuses it).
 */
export function unpackParlayCommand(v: unknown): unknown {
  if (!Array.isArray(v) || v.length !== 10 || v[0] !== PACKED_CREATION || !Array.isArray(v[2]) || !Array.isArray(v[9])) return v;
  const legs = v[9] as unknown[];
  if (!legs.every((l) => Array.isArray(l) && l.length === 4)) return v;
  const [, signature, pos, parlayId, user, stake, combinedProbability, potentialPayout, createdAt] = v;
  return {
    type: 'ParlayCreated',
    eventId: `${signature}:${(pos as unknown[])[2]}`,
    pos,
    signature,
    parlayId,
    user,
    stake,
    combinedProbability,
    potentialPayout,
    legs: (legs as unknown[][]).map(([marketId, market, outcome, probability]) => ({ marketId, market, outcome, probability })),
    createdAt,
  };
}

/**
 * The commands' schemas as the event decoder and the runtime use them: what the decoder vouched for
 * (src/parlay/decode.ts) is not parsed again by its actor's worker in the same process
 * (topics/checked.ts); from Kafka, every command is parsed.
 */
export const parlayCommands = checkedSchema(parlayCommand, parlayCreatedAsIs);
export const vaultCommands = checkedSchema(vaultCommand);

export type Pos = z.infer<typeof pos>;
/** What a Parlay answers each of its commands. */
export type ParlayReply = { result: 'applied' | 'duplicate' | 'deferred' | 'rejected'; reason?: string };
/** What the Vault answers each of its commands. */
export type VaultReply = { result: 'applied' | 'stale' };
export type ParlayReplies = { [T in ParlayCommand['type']]: ParlayReply };
export type VaultReplies = { [T in VaultCommand['type']]: VaultReply };

/** The topic as a typed channel: what senders write and what each command type answers. */
export interface ParlayEventsProtocol {
  cmd: z.input<typeof parlayCommand> | z.input<typeof vaultCommand>;
  replies: ParlayReplies & VaultReplies;
}

export type LegInput = z.infer<typeof legInput>;
export type ParlayCommand = z.infer<typeof parlayCommand>;
export type VaultCommand = z.infer<typeof vaultCommand>;
export type ConfigFields = z.infer<typeof configFields>;
export type VaultValues = z.infer<typeof vaultValues>;
export type VaultPatchFields = z.infer<typeof vaultPatchFields>;

/** Lexicographic order of positions; null is before everything. */
export function posAfter(a: Pos, b: Pos | null): boolean {
  if (!b) return true;
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] > b[i];
  return false;
}

// Applies webhook transactions: skip failed ones and those without events of the program, decode
// the rest and ask each event's actor (parlay id or `vault`) to apply it. A transaction counts as
// processed once every one of its events is applied (or known); any deferred event makes the whole
// delivery answer 503 so the provider retries, while what was applied stays applied. An event
// whose identity (signature, position) was first seen with other bytes is dead-lettered
// (`conflicting_event`), never applied as a new fact.
import { AskFailed, channel, type Asker, type Command } from '../runtime/asker.ts';
import type { DeadLetterRow, RuntimeStore } from '../runtime/store-port.ts';
import { VAULT_KEY } from '../../topics/names.ts';
import { decodeTransaction, reasonText, type DecodedEvent } from './decode.ts';
import { identityOf, type EventClaim, type EventIdentities } from './event-identity.ts';
import type { RawTransaction } from './webhook-schema.ts';
import { packParlayCommand, posAfter, type ParlayEventsProtocol, type VaultValues } from '../../topics/parlay-events.ts';

function latestValues(into: VaultValues, values: VaultValues) {
  for (const [k, f] of Object.entries(values) as [keyof VaultValues, NonNullable<VaultValues[keyof VaultValues]>][]) {
    const cur = into[k];
    if (!cur || posAfter(f.pos, cur.pos)) into[k] = f;
  }
}

export interface IngestDeps {
  asker: Asker;
  store: RuntimeStore;
  /** Where each event identity's content is kept (src/parlay/event-identity.ts). */
  identities: EventIdentities;
  topic: string;
  programId: string;
  /**
   * Creations go packed in bulk records on Kafka (topics/parlay-events.ts `packParlayCommand`).
   * Off while a node of a release that cannot read them still consumes (KAFKA_PACKED_EVENTS=0).
   */
  packCreations?: boolean;
  log: { warn(o: object, m?: string): void };
  metrics?: {
    deadLetter(reason: string): void;
    deferred(): void;
    truncated(): void;
    /** A delivery's time in one phase (`webhook_phase_seconds`). */
    phase?(phase: 'decode' | 'claim' | 'apply' | 'sync', seconds: number): void;
  };
}

export interface IngestResult {
  processed: number;
  skipped: number;
  deferred: number;
}

/** Dead-letter sources fit their column (varchar 255); signatures are bounded at the edge, this is the last guard. */
const sourceOf = (s: string) => (s.length > 255 ? s.slice(0, 255) : s);

/**
 * What the truncated-log dead letter keeps of a transaction: the fields the mirror reads (the body
 * was stripped of anything else), never a walk over what the provider added.
 */
const keptOf = (tx: RawTransaction) =>
  JSON.stringify({
    slot: tx.slot,
    blockTime: tx.blockTime ?? null,
    indexWithinBlock: tx.indexWithinBlock ?? null,
    signatures: tx.transaction.signatures,
    logMessages: tx.meta.logMessages ?? [],
  });

/** A delivery decoded: all the apply step needs, and nothing of the body (dropped before the first await). */
export interface DecodedDelivery {
  /** Transactions skipped (failed, or without events of the program). */
  skipped: number;
  /** Transactions with events, in order. */
  count: number;
  /** The events to claim and apply; `applyDelivery` empties it once their commands are asked. */
  claims: (EventClaim & { txIndex: number; event: DecodedEvent })[];
  deadLetters: DeadLetterRow[];
}

/**
 * The synchronous part of a delivery: skips, decodes and collects the dead letters of each
 * transaction. What it returns holds no reference to the body, so that a delivery waiting for its
 * commits does not keep the parsed body alive through the young generation's collections.
 */
export function decodeDelivery(deps: Pick<IngestDeps, 'programId' | 'log' | 'metrics'>, txs: RawTransaction[]): DecodedDelivery {
  let skipped = 0;
  let count = 0;
  const claims: DecodedDelivery['claims'] = [];
  const deadLetters: DeadLetterRow[] = [];
  for (const [i, tx] of txs.entries()) {
    if (tx.meta.err !== null && tx.meta.err !== undefined) {
      skipped++;
      continue;
    }
    const d = decodeTransaction(tx, deps.programId);
    if (d.eventCount === 0) {
      skipped++;
      continue;
    }
    count++;
    if (d.truncated) {
      deps.metrics?.truncated();
      deps.log.warn({ signature: d.signature }, 'log truncated: events past the cut are missing; reconcile from the chain');
      deadLetters.push({ source: sourceOf(`webhook:${d.signature}:truncated`), reason: 'log truncated', payload: keptOf(tx) });
    }
    for (const u of d.undecodable) {
      deps.metrics?.deadLetter('undecodable_event');
      deps.log.warn({ signature: d.signature, index: u.index, reason: u.reason }, 'undecodable program event dead-lettered');
      deadLetters.push({ source: sourceOf(`webhook:${d.signature}:${u.index}`), reason: reasonText(u.reason), payload: u.data });
    }
    for (const event of d.events) claims.push({ signature: d.signature, index: event.index, hash: event.hash, txIndex: i, event });
  }
  return { skipped, count, claims, deadLetters };
}

/** A delivery's transactions, decoded and applied (see `decodeDelivery` and `applyDelivery`). */
export async function ingestTransactions(deps: IngestDeps, txs: RawTransaction[]): Promise<IngestResult> {
  return applyDelivery(deps, decodeDelivery(deps, txs));
}

export async function applyDelivery(deps: IngestDeps, delivery: DecodedDelivery): Promise<IngestResult> {
  // No idempotency keys: the Parlay and Vault deciders recognise a repeated event themselves
  // (a parlay exists, a leg is settled, a position is not newer), so nothing needs remembering but
  // each event identity's content, which keeps a different payload from passing as a new event.
  for (const row of delivery.deadLetters) await deps.store.deadLetter(row);
  const { claims } = delivery;
  const claiming = performance.now();
  const conflicts = await deps.identities.claim(claims);
  deps.metrics?.phase?.('claim', (performance.now() - claiming) / 1000);
  const work: { txIndex: number; spec: Command<ParlayEventsProtocol['cmd']> }[] = [];
  const vaultValues: VaultValues = {};
  for (const c of claims) {
    if (conflicts.has(c)) {
      deps.metrics?.deadLetter('conflicting_event');
      deps.log.warn(
        { signature: c.signature, index: c.index, event: c.event.name },
        'event conflicting with the one first seen at its identity dead-lettered',
      );
      await deps.store.deadLetter({
        source: sourceOf(`webhook:${identityOf(c)}:conflict:${c.hash.slice(0, 16)}`),
        reason: reasonText(
          `conflicting_event: ${c.event.name} at ${identityOf(c)} differs from the event first seen with this signature and position; the first one stays`,
        ),
        payload: c.event.data,
      });
      continue;
    }
    for (const r of c.event.commands) {
      if (r.target === 'vault' && r.cmd.type === 'VaultObserved') {
        latestValues(vaultValues, r.cmd.values);
        continue;
      }
      const key = r.target === 'vault' ? VAULT_KEY : r.key;
      work.push({ txIndex: c.txIndex, spec: { key, cmd: r.cmd } });
    }
  }
  // The claims (each event's bytes, hash and decoded form) are not needed past this point: let them
  // go now rather than when the delivery is answered, so that a delivery waiting for its commits
  // does not carry them through the young generation's collections (only the commands travel on).
  claims.length = 0;
  // Vault values are last-writer-wins by position: one command carries the newest of each.
  if (Object.keys(vaultValues).length)
    work.push({ txIndex: -1, spec: { key: VAULT_KEY, cmd: { type: 'VaultObserved', values: vaultValues } } });
  // In bulk: the events of one partition travel as one record and are answered by one reply.
  const applying = performance.now();
  const outcomes = work.length
    ? await deps.asker.askBulkSettledTo(
        channel<ParlayEventsProtocol>(deps.topic, deps.packCreations ? { packed: packParlayCommand } : {}),
        work.map((w) => w.spec),
      )
    : [];
  if (work.length) deps.metrics?.phase?.('apply', (performance.now() - applying) / 1000);
  const deferredTx = new Set<number>();
  let timedOut: unknown = null;
  outcomes.forEach((o, j) => {
    if (o.status === 'fulfilled') {
      if (o.value?.result === 'deferred') deferredTx.add(work[j].txIndex);
      return;
    }
    // The runtime dead-lettered the event's command (a value the store refuses): it is kept with its
    // reason, like an undecodable line, and the delivery is answered; asking again would only
    // dead-letter it again. Any other failure (an owner that did not answer) is the delivery's.
    if (o.reason instanceof AskFailed) {
      deps.metrics?.deadLetter('event_refused');
      deps.log.warn({ key: work[j].spec.key, reason: o.reason.message }, 'an event was dead-lettered by the runtime; the delivery goes on');
      return;
    }
    timedOut ??= o.reason;
  });
  if (timedOut) throw timedOut;
  if (deferredTx.size) deps.metrics?.deferred();
  return { processed: delivery.count - deferredTx.size, skipped: delivery.skipped, deferred: deferredTx.size };
}

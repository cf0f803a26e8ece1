// Applies webhook transactions: skip failed ones and those without events of the program, decode
// the rest and ask each event's actor (parlay id or `vault`) to apply it. A transaction counts as
// processed once every one of its events is applied (or known); any deferred event makes the whole
// delivery answer 503 so the provider retries, while what was applied stays applied.
import type { Asker } from '../runtime/asker.ts';
import type { RuntimeStore } from '../runtime/store-port.ts';
import { VAULT_KEY } from '../../topics/names.ts';
import { decodeTransaction } from './decode.ts';
import type { RawTransaction } from './webhook-schema.ts';
import { posAfter, type VaultValues } from '../../topics/parlay-events.ts';

function latestValues(into: VaultValues, values: VaultValues) {
  for (const [k, f] of Object.entries(values) as [keyof VaultValues, NonNullable<VaultValues[keyof VaultValues]>][]) {
    const cur = into[k];
    if (!cur || posAfter(f.pos, cur.pos)) into[k] = f;
  }
}

export interface IngestDeps {
  asker: Asker;
  store: RuntimeStore;
  topic: string;
  programId: string;
  log: { warn(o: object, m?: string): void };
  metrics?: { deadLetter(reason: string): void; deferred(): void; truncated(): void };
}

export interface IngestResult { processed: number; skipped: number; deferred: number }

export async function ingestTransactions(deps: IngestDeps, txs: RawTransaction[]): Promise<IngestResult> {
  let skipped = 0;
  // No idempotency keys: the Parlay and Vault deciders recognise a repeated event themselves
  // (a parlay exists, a leg is settled, a position is not newer), so nothing needs remembering.
  const work: { txIndex: number; spec: { topic: string; key: string; cmd: unknown } }[] = [];
  const counted = new Set<number>();
  const vaultValues: VaultValues = {};
  for (const [i, tx] of txs.entries()) {
    if (tx.meta.err !== null && tx.meta.err !== undefined) { skipped++; continue; }
    const d = decodeTransaction(tx, deps.programId);
    if (d.eventCount === 0) { skipped++; continue; }
    counted.add(i);
    if (d.truncated) {
      deps.metrics?.truncated();
      deps.log.warn({ signature: d.signature }, 'log truncated: events past the cut are missing; reconcile from the chain');
      await deps.store.deadLetter({ source: `webhook:${d.signature}:truncated`, reason: 'log truncated', payload: JSON.stringify(tx) });
    }
    for (const u of d.undecodable) {
      deps.metrics?.deadLetter('undecodable_event');
      deps.log.warn({ signature: d.signature, index: u.index, reason: u.reason }, 'undecodable program event dead-lettered');
      await deps.store.deadLetter({ source: `webhook:${d.signature}:${u.index}`, reason: u.reason, payload: u.data });
    }
    for (const c of d.commands) {
      if (c.target === 'vault' && c.cmd.type === 'VaultObserved') { latestValues(vaultValues, c.cmd.values); continue; }
      const key = c.target === 'vault' ? VAULT_KEY : c.key;
      work.push({ txIndex: i, spec: { topic: deps.topic, key, cmd: c.cmd } });
    }
  }
  // Vault values are last-writer-wins by position: one command carries the newest of each.
  if (Object.keys(vaultValues).length) work.push({ txIndex: -1, spec: { topic: deps.topic, key: VAULT_KEY, cmd: { type: 'VaultObserved', values: vaultValues } } });
  const replies = work.length ? await deps.asker.askMany<{ result: string }>(work.map((w) => w.spec)) : [];
  const deferredTx = new Set<number>();
  replies.forEach((r, j) => { if (r?.result === 'deferred') deferredTx.add(work[j].txIndex); });
  if (deferredTx.size) deps.metrics?.deferred();
  return { processed: counted.size - deferredTx.size, skipped, deferred: deferredTx.size };
}

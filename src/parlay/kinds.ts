// The parlay side's actor kinds, as the runtime hosts them: deciders + command schemas + projections.
import { parlayDecider, type ParlayEvent, type ParlayState } from '../../actors/parlay/decider.ts';
import { vaultDecider, type VaultEvent, type VaultState } from '../../actors/vault/decider.ts';
import {
  parlayCommands,
  vaultCommands,
  type ParlayCommand,
  type ParlayReply,
  type VaultCommand,
  type VaultReply,
  unpackParlayCommand,
} from '../../topics/parlay-events.ts';
import { VAULT_KEY } from '../../topics/names.ts';
import { loadParlayStates, projectParlays } from '../store/projections/parlay.ts';
import { projectVault } from '../store/projections/vault.ts';
import type { ActorKind } from '../runtime/types.ts';

export function parlayKinds(topic: string): { kind: ActorKind; owns(key: string): boolean }[] {
  const parlay: ActorKind<ParlayState, ParlayCommand, ParlayEvent, ParlayReply> = {
    name: 'parlay',
    topic,
    decider: parlayDecider,
    // A creation may come packed (a bulk record on Kafka): unpacked, then checked as any command.
    parse: (c) => parlayCommands.parse(unpackParlayCommand(c)),
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as ParlayState,
    project: projectParlays,
    // Its state is its rows; a creation needs none (insert, or nothing when the parlay exists).
    rows: { load: loadParlayStates, blind: (c) => c.type === 'ParlayCreated' },
  };
  const vault: ActorKind<VaultState, VaultCommand & { at: number }, VaultEvent, VaultReply> = {
    name: 'vault',
    topic,
    decider: vaultDecider,
    // The envelope's time is the command's clock: the decider stays pure.
    parse: (c, env) => ({ ...vaultCommands.parse(c), at: env.at }),
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as VaultState,
    project: projectVault,
  };
  return [
    { kind: vault, owns: (key) => key === VAULT_KEY },
    { kind: parlay, owns: (key) => /^\d{1,20}$/.test(key) },
  ];
}

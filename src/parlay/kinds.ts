// The parlay side's actor kinds, as the runtime hosts them: deciders + command schemas + projections.
import { parlayDecider, type ParlayState } from '../../actors/parlay/decider.ts';
import { vaultDecider, type VaultState } from '../../actors/vault/decider.ts';
import { parlayCommand, vaultCommand } from '../../topics/parlay-events.ts';
import { VAULT_KEY } from '../../topics/names.ts';
import { projectParlays } from '../store/projections/parlay.ts';
import { projectVault } from '../store/projections/vault.ts';
import type { ActorKind } from '../runtime/types.ts';

export function parlayKinds(topic: string): { kind: ActorKind; owns(key: string): boolean }[] {
  const parlay: ActorKind<ParlayState> = {
    name: 'parlay',
    topic,
    decider: parlayDecider as any,
    parse: (c) => parlayCommand.parse(c),
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as ParlayState,
    project: (tx, applied) => projectParlays(tx, applied as any),
  };
  const vault: ActorKind<VaultState> = {
    name: 'vault',
    topic,
    decider: vaultDecider as any,
    // The envelope's time is the command's clock: the decider stays pure.
    parse: (c, env) => ({ ...vaultCommand.parse(c), at: env.at }),
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as VaultState,
    project: (tx, applied) => projectVault(tx, applied as any),
  };
  return [
    { kind: vault, owns: (key) => key === VAULT_KEY },
    { kind: parlay, owns: (key) => /^\d{1,20}$/.test(key) },
  ];
}

// The nact side: one actor per key inside a partition's parent actor. Each actor holds its key's
// state and runs decide then evolve on each command, in mailbox order.
import { dispatch, spawn, spawnStateless, stop } from 'nact';
import type { ActorKind, Decision, Envelope } from './types.ts';

export interface StepResult {
  decision?: Decision<unknown, unknown>;
  state: unknown;
  error?: Error;
}

/** One mailbox turn: a batch's commands of one key, stepped in order. */
interface StepMsg {
  steps: { envelope: Envelope; command: unknown }[];
  done(r: StepResult[]): void;
}

export function step(kind: ActorKind, state: unknown, command: unknown): StepResult {
  try {
    const decision = kind.decider.decide(state, command);
    let next = state;
    for (const e of decision.events) next = kind.decider.evolve(next, e);
    return { decision, state: next };
  } catch (error) {
    return { state, error: error as Error };
  }
}

let generation = 0;

/**
 * A partition's actors. Dropped whole when the partition moves or its state can no longer be trusted.
 * Kept in least-recently-used order (a Map's insertion order, refreshed on every message), so that
 * idle ones can be stopped once committed (`passivate`).
 */
export class PartitionActors {
  private parent: any;
  private actors = new Map<string, { ref: any; kind: ActorKind; state: () => unknown }>();
  private spawned = 0;

  constructor(system: any, name: string) {
    this.parent = spawnStateless(system, () => undefined, `p${++generation}-${name.replace(/[^a-zA-Z0-9-]/g, '-')}`);
  }

  has(key: string): boolean {
    return this.actors.has(key);
  }

  keys(): string[] {
    return [...this.actors.keys()];
  }

  /** Live actors per kind name (metrics). */
  countsByKind(into: Record<string, number> = {}): Record<string, number> {
    for (const a of this.actors.values()) into[a.kind.name] = (into[a.kind.name] ?? 0) + 1;
    return into;
  }

  /** The latest state an actor committed to memory (read-only use: queries, snapshots). */
  stateOf(key: string): unknown {
    return this.actors.get(key)?.state();
  }

  spawn(key: string, kind: ActorKind, initialState: unknown): void {
    let current = initialState;
    const ref = spawn(
      this.parent,
      (state: unknown, msg: StepMsg) => {
        const out: StepResult[] = [];
        for (const s of msg.steps) {
          const r = step(kind, state, s.command);
          state = r.state;
          out.push(r);
          // A throwing decider may have half-changed the state: the rest of this turn is not run.
          if (r.error) {
            for (let i = out.length; i < msg.steps.length; i++)
              out.push({ state, error: new Error('not run: an earlier command of this key failed') });
            break;
          }
        }
        current = state;
        msg.done(out);
        return state;
      },
      `a${++this.spawned}`,
      { initialState },
    );
    this.actors.set(key, { ref, kind, state: () => current });
  }

  send(key: string, envelope: Envelope, command: unknown): Promise<StepResult> {
    return this.sendMany(key, [{ envelope, command }]).then((r) => r[0]);
  }

  /** Several commands of one key in one mailbox turn (in order): one hop of the event loop, not one per command. */
  sendMany(key: string, steps: { envelope: Envelope; command: unknown }[]): Promise<StepResult[]> {
    const actor = this.actors.get(key);
    if (!actor) throw new Error(`no actor for ${key}`);
    this.actors.delete(key); // most recently used last
    this.actors.set(key, actor);
    return new Promise((done) => dispatch(actor.ref, { steps, done } satisfies StepMsg));
  }

  /**
   * Stops the least recently used actors past `max`, except those `keep` names (changed since
   * their snapshot). Only between batches, after a commit: every other actor's state is then its
   * stored snapshot (or its initial state), so the next command that needs one spawns it from there.
   */
  passivate(max: number, keep: (key: string) => boolean = () => false): number {
    let n = 0;
    for (const [key, actor] of this.actors) {
      if (this.actors.size <= max) break;
      if (keep(key)) continue;
      stop(actor.ref);
      this.actors.delete(key);
      n++;
    }
    return n;
  }

  drop(): void {
    stop(this.parent);
    this.actors.clear();
  }
}

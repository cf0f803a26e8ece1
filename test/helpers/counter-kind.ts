// A toy actor kind for runtime tests: a counter whose `Add` answers the new sum.
import type { ActorKind, Bus } from '../../src/runtime/types.ts';

export type CounterCmd = { type: 'Add'; n: number };
export interface CounterProtocol {
  cmd: CounterCmd;
  replies: { Add: { n: number } };
}

export function counter(topic: string): ActorKind<{ n: number }, CounterCmd, { type: 'Added'; n: number }, { n: number }> {
  return {
    name: 'counter',
    topic,
    decider: {
      initial: () => ({ n: 0 }),
      decide: (s, c) => ({ events: [{ type: 'Added', n: c.n }], reply: { n: s.n + c.n } }),
      evolve: (s, e) => ({ n: s.n + e.n }),
    },
    parse: (c: any) => {
      if (c?.type === 'Add' && Number.isInteger(c.n)) return { type: 'Add', n: c.n };
      throw new Error(`not a counter command: ${JSON.stringify(c)}`);
    },
    toSnapshot: (s) => s,
    fromSnapshot: (j) => j as { n: number },
    project: async () => undefined,
  };
}

/** Records on a topic so far (the sum of its partitions' high watermarks). */
export const recordsOn = async (bus: Bus, topic: string) => (await bus.offsets!(topic)).reduce((s, o) => s + Number(o.high), 0);

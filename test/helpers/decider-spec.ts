// Given/when/then specifications of a decider (Emmett's DeciderSpecification, in our words): the
// state is built by evolving the given events from the decider's initial state, the command is
// decided, and the test names what must come out — the events, the reply, or both. Pure: no I/O.
import type { ExecutionContext } from 'ava';
import type { Decider, Decision } from '../../src/runtime/types.ts';

export interface DeciderSpec<C, E, R> {
  /** Events that already happened to the actor. */
  given(...events: E[]): {
    /** The command decided against the state they leave. */
    when(command: C): {
      /** What the decision must be (fields left out are not checked). */
      then(t: ExecutionContext, expected: { events?: E[]; reply?: R }): Decision<E, R>;
      /** The decision, for checks of its own. */
      decision(): Decision<E, R>;
    };
  };
}

export function deciderSpec<S, C, E, R>(decider: Decider<S, C, E, R>, key = 'K'): DeciderSpec<C, E, R> {
  return {
    given(...events) {
      const state = events.reduce((s, e) => decider.evolve(s, e), decider.initial(key));
      return {
        when(command) {
          const decision = () => decider.decide(state, command);
          return {
            decision,
            then(t, expected) {
              const d = decision();
              if (expected.events !== undefined) t.deepEqual(d.events, expected.events, 'the events decided');
              if (expected.reply !== undefined) t.deepEqual(d.reply, expected.reply, 'the reply');
              return d;
            },
          };
        },
      };
    },
  };
}

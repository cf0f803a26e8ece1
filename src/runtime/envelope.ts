// The one place a command's envelope `{ v: 1, id, at, cmd }` is built, and the reply topic a node
// reads its answers from. Every sender (the asker, the projections that command through the
// outbox) goes through here, so the wire format has one author.
import { toJson } from './json.ts';
import type { Envelope } from './types.ts';

export interface EnvelopeOptions {
  /** Idempotency key: a command seen before is answered with its first reply, not applied again. */
  id?: string;
  /** Milliseconds since the epoch: the command's clock. */
  at: number;
}

export function envelope<C>(cmd: C, o: EnvelopeOptions): Envelope<C> {
  return { v: 1, id: o.id, at: o.at, cmd };
}

/** The envelope of `cmd` as a record's value (JSON; a bigint becomes its decimal string). */
export function envelopeJson<C>(cmd: C, o: EnvelopeOptions): string {
  return toJson(envelope(cmd, o));
}

/** The topic a node reads the answers to its asks from. */
export function replyTopicOf(nodeId: string): string {
  return `replies.${nodeId.replace(/[^a-zA-Z0-9._-]/g, '_')}`;
}

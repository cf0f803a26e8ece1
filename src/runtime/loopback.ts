// Replies that stay in the process. A node's reply topic is read by that node alone (its Asker),
// so an answer whose asker is on the same bus connection as the worker that answers it is handed
// over directly instead of being produced to the broker and fetched back: no record, no two
// transits. The asker reads the same text it would have read from the topic, after the same commit.
// Registered per bus instance (a node's connection): two nodes in one process, each with its own
// bus, still answer each other through the transport. Used on the durable bus (Kafka) only: see
// Asker.start.
import type { Bus, OutRecord } from './types.ts';
import { directLinksOf } from './direct-replies.ts';

type Receiver = (value: string) => void;

const receivers = new WeakMap<Bus, Map<string, Receiver>>();

/** `topic`'s records sent on `bus` go to `receive` from now on; the returned function undoes it. */
export function receiveLocally(bus: Bus, topic: string, receive: Receiver): () => void {
  let topics = receivers.get(bus);
  if (!topics) receivers.set(bus, (topics = new Map()));
  topics.set(topic, receive);
  return () => {
    if (topics.get(topic) === receive) topics.delete(topic);
  };
}

/**
 * Sends `records` to `topic`: handed to its receiver in this process when it has one, else written
 * to the asker's reply server at `via` when its connection is up (direct-replies.ts), else on the bus.
 */
export async function deliver(bus: Bus, topic: string, records: OutRecord[], via?: string): Promise<void> {
  const receive = receivers.get(bus)?.get(topic);
  if (receive) {
    for (const r of records) receive(r.value);
    return;
  }
  if (
    via &&
    directLinksOf(bus)?.trySend(
      via,
      topic,
      records.map((r) => r.value),
    )
  )
    return;
  return bus.send(topic, records);
}

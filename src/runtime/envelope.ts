// The one place a command's envelope `{ v: 1, id, at, cmd }` is built, and the reply topic a node
// reads its answers from. Every sender (the asker, the projections that command through the
// outbox) goes through here, so the wire format has one author.
import { toJson } from './json.ts';
import type { Envelope, OutRecord } from './types.ts';

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

/**
 * A record whose `value` text is built by `value()` only when something reads it (the in-process
 * bus hands `decoded` to the consumer instead; see OutRecord.decoded). Copy it field by field, never
 * with a spread, or the text is built.
 */
export function lazyRecord<R extends Omit<OutRecord, 'value'>>(fields: R, value: () => string): R & OutRecord {
  return Object.defineProperty(fields, 'value', { enumerable: true, get: value }) as R & OutRecord;
}

/** What an in-process record (one handed over as `decoded`) counts per command in `recordChars`. */
export const DECODED_COMMAND_CHARS = 512;

/**
 * About how many characters a record stands for, without building the text of a lazy record: a
 * record handed over as an object (OutRecord.decoded) counts DECODED_COMMAND_CHARS per command.
 * Building that text only to measure it was 3.5% of the in-process ingest node's time.
 */
export function recordChars(r: OutRecord): number {
  if (r.decoded === undefined) return (r.value as string | undefined)?.length ?? 0;
  const bulk = (r.decoded as { bulk?: unknown } | null)?.bulk;
  return (Array.isArray(bulk) ? Math.max(1, bulk.length) : 1) * DECODED_COMMAND_CHARS;
}

/** The topic a node reads the answers to its asks from. */
export function replyTopicOf(nodeId: string): string {
  return `replies.${nodeId.replace(/[^a-zA-Z0-9._-]/g, '_')}`;
}

/**
 * Several commands for keys of one partition in one record (a webhook delivery's events): one
 * envelope, one reply (`BulkReply`, one entry per command, in order). The record's key is the first
 * command's; every key in it lands on the same partition (the sender groups them so). Bulk commands
 * carry no idempotency key: their kinds recognise a repeated command themselves.
 */
export interface BulkEnvelope {
  v: 1;
  at: number;
  bulk: { key: string; cmd: unknown }[];
}

/** One command's answer inside a bulk reply: its reply, or why the runtime refused it. */
export type BulkAnswer = { reply: unknown } | { error: string };

/** One command of a bulk envelope as JSON (the parts are joined by `bulkEnvelopeJson`). */
export function bulkPartJson(key: string, cmd: unknown): string {
  return toJson({ key, cmd });
}

/** A bulk envelope as an object (what JSON.parse of its text gives): for the in-process bus, which hands it over unencoded. */
export function bulkEnvelope(commands: { key: string; cmd: unknown }[], at: number): BulkEnvelope {
  return { v: 1, at: Math.trunc(at), bulk: commands.map((c) => ({ key: c.key, cmd: c.cmd })) };
}

/** A bulk envelope from its commands' JSON parts (each from bulkPartJson): no command encoded twice. */
export function bulkEnvelopeJson(parts: string[], at: number): string {
  return `{"v":1,"at":${Math.trunc(at)},"bulk":[${parts.join(',')}]}`;
}

/** Bounds of one bulk record: commands and characters of its JSON (well under a Kafka message's 1 MB). */
export const BULK_MAX_COMMANDS = 500;
export const BULK_MAX_CHARS = 256 * 1024;

/**
 * The commands a record carries, each as its own key and envelope: one for a plain record, every
 * command of a bulk record (with the record's time). Throws on a value that is neither.
 */
export function commandsOf(key: string, value: string | object): { key: string; envelope: Envelope; bulk: boolean }[] {
  // A record's text, or what the in-process bus handed over unencoded (OutRecord.decoded).
  const parsed = (typeof value === 'string' ? JSON.parse(value) : value) as Envelope | BulkEnvelope;
  if (!parsed || parsed.v !== 1 || typeof parsed.at !== 'number') throw new Error('not a v1 envelope');
  if (!('bulk' in parsed)) return [{ key, envelope: parsed, bulk: false }];
  const list = parsed.bulk;
  if (!Array.isArray(list) || list.length === 0 || list.length > BULK_MAX_COMMANDS) throw new Error('not a bulk envelope');
  return list.map((c) => {
    if (!c || typeof c.key !== 'string' || !c.key) throw new Error('a bulk command without a key');
    return { key: c.key, envelope: { v: 1, at: parsed.at, cmd: c.cmd }, bulk: true };
  });
}

// Asks: a command sent to its key's topic with a correlation id and this node's reply topic,
// answered by the key's owner once the command's effects are committed.
import { randomUUID } from 'node:crypto';
import {
  BULK_MAX_CHARS,
  BULK_MAX_COMMANDS,
  bulkEnvelope,
  bulkEnvelopeJson,
  bulkPartJson,
  envelope,
  envelopeJson,
  lazyRecord,
  replyTopicOf,
  type BulkAnswer,
} from './envelope.ts';
import { partitionFor } from './partitioner.ts';
import { cutBySize } from './cut.ts';
import { receiveLocally } from './loopback.ts';
import { DirectLinks, REPLY_VIA, ReplyServer, useDirectLinks, type ReplyServerOptions } from './direct-replies.ts';
import { jsonCopy, toJson, type Json } from './json.ts';
import { CORRELATION, REPLY_BATCH, REPLY_TO, type ReplyMessage } from './partition-worker.ts';
import type { Bus, ConsumerHandle, OutRecord } from './types.ts';

export class AskTimeout extends Error {
  constructor(
    readonly topic: string,
    readonly key: string,
  ) {
    super(`no answer from the owner of ${topic}/${key} in time`);
  }
}

export class AskFailed extends Error {}

/** A bulk record refused whole: none of its commands was applied; they are to be asked one by one. */
export class AskSplit extends AskFailed {}

export interface AskSpec {
  topic: string;
  key: string;
  cmd: unknown;
  /** Idempotency key: a retried ask with the same id gets the first answer. */
  id?: string;
  at?: number;
}

/**
 * A command topic's contract as a type (each topic module exports one, e.g. `BookProtocol`): the
 * commands a sender writes, and for each command type the reply its owner sends back.
 */
export interface Protocol {
  cmd: { type: string };
  replies: object;
}

/** A topic name bound to its protocol, so that asks on it are typed by their command. */
export interface Channel<P extends Protocol> {
  readonly topic: string;
  /** Type only: never set. */
  readonly protocol?: P;
  /**
   * The form a command takes in a bulk record's text (a durable bus only; in process the command
   * goes as it is): the topic's compact form, which its consumers' `parse` reads back.
   */
  readonly packed?: (cmd: P['cmd']) => unknown;
}

export function channel<P extends Protocol>(topic: string, o: { packed?: (cmd: P['cmd']) => unknown } = {}): Channel<P> {
  return o.packed ? { topic, packed: o.packed } : { topic };
}

/** How long an idle fetch of the reply topic waits at the broker (see `start`). */
const REPLY_IDLE_WAIT_MS = 500;

/** The reply to `C` as it arrives: the protocol's reply for its type, through JSON. */
export type Answer<P extends Protocol, C extends { type: string }> = Json<P['replies'][C['type'] & keyof P['replies']]>;

/** One command of a typed ask: its key, the command, and optionally its idempotency key and time. */
export interface Command<C> {
  key: string;
  cmd: C;
  id?: string;
  at?: number;
}

interface Pending {
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer?: NodeJS.Timeout;
}

export class Asker {
  readonly replyTopic: string;
  private pending = new Map<string, Pending>();
  private consumer: ConsumerHandle | null = null;

  /** Called once per ask with its outcome (metrics). */
  observe?: (topic: string, outcome: 'ok' | 'timeout' | 'failed', seconds: number) => void;

  /**
   * `direct`: on a durable bus, answers from other nodes come straight to a ReplyServer of this
   * asker (direct-replies.ts), named in every ask, instead of through the reply topic, which stays
   * the way whenever the direct one is not up. Without it, every answer from another node travels
   * through the reply topic.
   */
  constructor(
    private bus: Bus,
    nodeId: string,
    private defaultTimeoutMs = 10_000,
    private direct?: ReplyServerOptions,
  ) {
    this.replyTopic = replyTopicOf(nodeId);
    this.askHeaders = { [REPLY_TO]: this.replyTopic, [REPLY_BATCH]: '1' };
  }

  private server: ReplyServer | null = null;
  private links: (() => void) | null = null;
  private directLinks: DirectLinks | null = null;

  /**
   * Reply records this node's workers sent to askers that named a reply server: written to it
   * (`direct`), or through the asker's reply topic while that connection was not up (`topic`).
   */
  replyCounts(): { direct: number; topic: number } {
    return { ...(this.directLinks?.counts ?? { direct: 0, topic: 0 }) };
  }
  /** The headers of every ask but its correlation id. */
  private askHeaders: Record<string, string>;

  async start(): Promise<void> {
    await this.bus.ensureTopics([{ topic: this.replyTopic, partitions: 1 }]);
    this.consumer = await this.bus.consume({
      groupId: this.replyTopic,
      topics: [this.replyTopic],
      fromBeginning: false,
      // With direct replies (and this node's own answers in the process) the reply topic carries
      // next to nothing: polled every 100 ms, its idle fetches and heartbeats were an eighth of
      // the broker's requests in a loaded 3-node order run. A record still ends the wait at once.
      idleWaitMs: REPLY_IDLE_WAIT_MS,
      onBatch: async (batch) => {
        // In the process the answers come as values (OutRecord.decoded): nothing to parse.
        for (const r of batch.records) this.received(r.decoded ?? r.value);
        return { done: true };
      },
    });
    await this.awaitPing();
    // Answers from this node's own workers no longer travel through the broker (loopback.ts). The
    // in-process bus has no broker to spare: there its reply hop stays (handing answers over at once
    // made batches smaller: 5–8% more node CPU per order, measured on the embedded bench).
    if (this.bus.durable) this.local = receiveLocally(this.bus, this.replyTopic, (value) => this.received(value));
    if (this.bus.durable && this.direct) {
      const server = new ReplyServer(this.direct, (topic) => (topic === this.replyTopic ? (value) => this.received(value) : undefined));
      const via = await server.start();
      this.server = server;
      this.directLinks = new DirectLinks(this.direct.secret);
      this.links = useDirectLinks(this.bus, this.directLinks);
      this.askHeaders = { ...this.askHeaders, [REPLY_VIA]: via };
    }
  }

  /** Where other nodes' workers write this asker's answers (`host:port`), if it has a reply server. */
  get replyVia(): string | undefined {
    return this.server?.address;
  }

  private local: (() => void) | null = null;

  /** A reply record's text, or in the process the value it parses to: one answer, or the answers of one batch of an owner (see REPLY_BATCH). */
  private received(value: unknown): void {
    let msgs: ReplyMessage | ReplyMessage[];
    try {
      msgs = (typeof value === 'string' ? JSON.parse(value) : value) as ReplyMessage | ReplyMessage[];
    } catch {
      return;
    }
    for (const msg of Array.isArray(msgs) ? msgs : [msgs]) {
      const p = msg && this.pending.get(msg.corr);
      if (!p) continue;
      this.pending.delete(msg.corr);
      if (p.timer) clearTimeout(p.timer);
      if (msg.error) p.reject(msg.split ? new AskSplit(msg.error) : new AskFailed(msg.error));
      else p.resolve(msg.reply);
    }
  }

  /** Waits until this node reads its own reply topic, so no answer can slip past a new consumer. */
  private async awaitPing(): Promise<void> {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const corr = `ping-${randomUUID()}`;
      const got = new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          this.pending.delete(corr);
          resolve(false);
        }, 1000);
        this.pending.set(corr, { resolve: () => resolve(true), reject: () => resolve(true), timer });
      });
      await this.bus.send(this.replyTopic, [{ key: corr, value: toJson({ corr, reply: 'pong' }) }]);
      if (await got) return;
    }
    throw new Error(`reply topic ${this.replyTopic} not readable`);
  }

  /** Asks `cmd` of the owner of `key` on the channel's topic; the reply is typed by the command's type. */
  askTo<P extends Protocol, const C extends P['cmd']>(
    ch: Channel<P>,
    key: string,
    cmd: C,
    o: { id?: string; at?: number; timeoutMs?: number } = {},
  ): Promise<Answer<P, C>> {
    return this.ask<Answer<P, C>>({ topic: ch.topic, key, cmd, id: o.id, at: o.at }, o.timeoutMs);
  }

  /** askMany on one channel, typed as askTo. */
  askManyTo<P extends Protocol, const C extends P['cmd']>(
    ch: Channel<P>,
    commands: Command<C>[],
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<Answer<P, C>[]> {
    return this.askMany<Answer<P, C>>(
      commands.map((c) => ({ topic: ch.topic, ...c })),
      timeoutMs,
    );
  }

  /** askManySettled on one channel, typed as askTo. */
  askManySettledTo<P extends Protocol, const C extends P['cmd']>(
    ch: Channel<P>,
    commands: Command<C>[],
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<PromiseSettledResult<Answer<P, C>>[]> {
    return this.askManySettled<Answer<P, C>>(
      commands.map((c) => ({ topic: ch.topic, ...c })),
      timeoutMs,
    );
  }

  /**
   * As askManySettledTo, in bulk: the commands of one partition travel in one record (a bulk
   * envelope, see envelope.ts) and come back in one reply, instead of a record and a reply each.
   * For commands without idempotency keys whose kinds recognise a repeat themselves.
   */
  async askBulkSettledTo<P extends Protocol, const C extends P['cmd']>(
    ch: Channel<P>,
    commands: { key: string; cmd: C }[],
    timeoutMs = this.defaultTimeoutMs,
  ): Promise<PromiseSettledResult<Answer<P, C>>[]> {
    const n = this.bus.partitionsOf(ch.topic);
    const groups = new Map<number, number[]>();
    commands.forEach((c, i) => {
      const p = partitionFor(c.key, n);
      const list = groups.get(p);
      if (list) list.push(i);
      else groups.set(p, [i]);
    });
    // Each partition's commands, cut into records within the bulk bounds. The in-process bus takes
    // the envelope as an object (OutRecord.decoded): no text is built unless something reads it.
    const inProcess = !this.bus.durable;
    const pack = ch.packed;
    const parts = inProcess ? null : commands.map((c) => bulkPartJson(c.key, pack ? pack(c.cmd) : c.cmd));
    const records = [...groups.values()].flatMap((idx) =>
      cutBySize(idx, (i) => (parts ? parts[i].length + 1 : 0), BULK_MAX_CHARS, BULK_MAX_COMMANDS),
    );
    const now = Date.now();
    const answers = await this.sendMany<BulkAnswer[]>(
      records.map((idx) => {
        const key = commands[idx[0]].key;
        if (parts)
          return {
            topic: ch.topic,
            key,
            cmd: undefined,
            value: bulkEnvelopeJson(
              idx.map((i) => parts[i]),
              now,
            ),
          };
        const decoded = bulkEnvelope(
          idx.map((i) => commands[i]),
          now,
        );
        let text: string | undefined;
        return { topic: ch.topic, key, cmd: undefined, decoded, value: () => (text ??= toJson(decoded)) };
      }),
      timeoutMs,
    );
    const out: PromiseSettledResult<Answer<P, C>>[] = new Array(commands.length);
    const settled = await Promise.allSettled(answers);
    // A record refused whole (one of its commands fails): its commands again, one record each.
    const again = settled.flatMap((s, r) => (s.status === 'rejected' && s.reason instanceof AskSplit ? records[r] : []));
    const alone = again.length
      ? await this.askManySettled<Answer<P, C>>(
          again.map((i) => ({ topic: ch.topic, key: commands[i].key, cmd: commands[i].cmd })),
          timeoutMs,
        )
      : [];
    again.forEach((i, j) => {
      out[i] = alone[j];
    });
    settled.forEach((s, r) => {
      const idx = records[r];
      idx.forEach((i, j) => {
        if (out[i]) return;
        if (s.status === 'rejected') out[i] = { status: 'rejected', reason: s.reason };
        else {
          const a = Array.isArray(s.value) ? s.value[j] : undefined;
          if (!a) out[i] = { status: 'rejected', reason: new AskFailed('no answer for this command in its bulk reply') };
          else if ('error' in a) out[i] = { status: 'rejected', reason: new AskFailed(a.error) };
          else out[i] = { status: 'fulfilled', value: a.reply as Answer<P, C> };
        }
      });
    });
    return out;
  }

  /** tell on one channel, the commands typed by its protocol. */
  tellTo<P extends Protocol>(ch: Channel<P>, commands: Command<P['cmd']>[]): Promise<void> {
    return this.tell(commands.map((c) => ({ topic: ch.topic, ...c })));
  }

  ask<R = unknown>(spec: AskSpec, timeoutMs = this.defaultTimeoutMs): Promise<R> {
    return this.askMany<R>([spec], timeoutMs).then((r) => r[0]);
  }

  /** Sends every command in one produce call per topic and waits for all answers. */
  async askMany<R = unknown>(specs: AskSpec[], timeoutMs = this.defaultTimeoutMs): Promise<R[]> {
    return Promise.all(await this.sendMany<R>(specs, timeoutMs));
  }

  /**
   * As askMany, but each command's outcome on its own: a command the runtime dead-lettered
   * (AskFailed) or that timed out does not hide the answers of the others.
   */
  async askManySettled<R = unknown>(specs: AskSpec[], timeoutMs = this.defaultTimeoutMs): Promise<PromiseSettledResult<R>[]> {
    return Promise.allSettled(await this.sendMany<R>(specs, timeoutMs));
  }

  /** Sends the commands (one produce call per topic); resolves to one pending answer per command. */
  private async sendMany<R>(
    specs: (AskSpec & { value?: string | (() => string); decoded?: unknown })[],
    timeoutMs: number,
  ): Promise<Promise<R>[]> {
    const now = Date.now();
    const started = process.hrtime.bigint();
    const byTopic = new Map<string, OutRecord[]>();
    // One timer for the whole call (its asks all started now): what is still unanswered then times out.
    const waiting: { corr: string; spec: AskSpec; seen(outcome: 'timeout'): void; reject(e: Error): void }[] = [];
    const answers = specs.map((s) => {
      const corr = randomUUID();
      const list = byTopic.get(s.topic) ?? [];
      const headers = { [CORRELATION]: corr, ...this.askHeaders };
      const v = s.value;
      if (typeof v === 'function') {
        // Built when read (the in-process bus reads it only to dead-letter or journal the record).
        list.push(lazyRecord({ key: s.key, headers, decoded: s.decoded }, v));
      } else if (v === undefined && !this.bus.durable) {
        // In the process: the envelope as the value JSON would give the owner (a bigint as its
        // decimal text; OutRecord.decoded), its text built only if something reads it. An order's
        // envelope was stringified here and parsed again by its owner: 2% of the embedded node.
        const decoded = jsonCopy(envelope(s.cmd, { id: s.id, at: s.at ?? now }));
        list.push(lazyRecord({ key: s.key, headers, decoded }, () => toJson(decoded)));
      } else list.push({ key: s.key, value: v ?? envelopeJson(s.cmd, { id: s.id, at: s.at ?? now }), headers });
      byTopic.set(s.topic, list);
      const seen = (outcome: 'ok' | 'timeout' | 'failed') =>
        this.observe?.(s.topic, outcome, Number(process.hrtime.bigint() - started) / 1e9);
      return new Promise<R>((resolve, reject) => {
        waiting.push({ corr, spec: s, seen, reject });
        this.pending.set(corr, {
          resolve: (v: unknown) => {
            seen('ok');
            (resolve as (v: unknown) => void)(v);
          },
          reject: (e: Error) => {
            seen('failed');
            reject(e);
          },
        });
      });
    });
    const timer = setTimeout(() => {
      for (const w of waiting) {
        if (!this.pending.delete(w.corr)) continue; // answered
        w.seen('timeout');
        w.reject(new AskTimeout(w.spec.topic, w.spec.key));
      }
    }, timeoutMs);
    void Promise.allSettled(answers).then(() => clearTimeout(timer));
    try {
      await Promise.all([...byTopic].map(([topic, recs]) => this.bus.send(topic, recs)));
    } catch (e) {
      answers.forEach((a) => a.catch(() => undefined));
      throw e;
    }
    return answers;
  }

  /** Sends commands without waiting for answers (fire and forget, still ordered per key). */
  async tell(specs: AskSpec[]): Promise<void> {
    const now = Date.now();
    const byTopic = new Map<string, { key: string; value: string }[]>();
    for (const s of specs) {
      const list = byTopic.get(s.topic) ?? [];
      list.push({ key: s.key, value: envelopeJson(s.cmd, { id: s.id, at: s.at ?? now }) });
      byTopic.set(s.topic, list);
    }
    await Promise.all([...byTopic].map(([topic, recs]) => this.bus.send(topic, recs)));
  }

  async stop(): Promise<void> {
    this.local?.();
    this.local = null;
    this.links?.();
    this.links = null;
    await this.server?.stop();
    this.server = null;
    await this.consumer?.stop();
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new Error('node stopping'));
    }
    this.pending.clear();
  }
}

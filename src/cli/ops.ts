// Recovery tools (issue 8, item 6):  npx tsx src/cli/ops.ts <command> [options]
//                                    (or `npm run ops -- <command>`, or `npx parlay-clob-ops <command>`)
// Settings come from the environment, as for a node (DATABASE_URL, KAFKA_BROKERS, TOPIC_PREFIX,
// KAFKA_GROUP, SOLANA_RPC_URL, PARLAY_PROGRAM_ID, ...). Progress goes to stderr (a bar on a TTY,
// plain lines elsewhere); the result is one JSON object on stdout. Ctrl-C stops a long command
// after its current step and keeps its cursor: run the same command again to resume.
// Exit codes: 0 done, 1 failed, 2 usage or refused, 3 done with deferred transactions, 130 interrupted.
import { parseArgs } from 'node:util';
import { ConfigError, environment } from '../config.ts';
import { toJson } from '../runtime/json.ts';
import { openContext, OpsError, type OpsContext } from './context.ts';
import { reconcile } from './reconcile.ts';
import { rebuildReadModels, replayPartition } from './replay.ts';
import { inspectActor } from './inspect.ts';
import { listJobs } from './jobs.ts';
import { listDeadLetters, replayDeadLetters } from './dead-letters.ts';

const HELP = `parlay-clob-ops <command> [options]

commands:
  reconcile --since-slot N [--until-slot M] [--rpc URL] [--webhook-url URL [--webhook-secret S]]
            [--page N] [--batch N] [--pace-ms MS] [--restart]
      Reads the parlay program's transactions from the chain (getSignaturesForAddress, then
      getTransaction, oldest first) since slot N and applies them through the webhook ingest path
      (in-process asks over KAFKA_BROKERS, or POSTed to a node's webhook with --webhook-url).
      Idempotent: what the mirror holds already changes nothing.
  rebuild-read-models [--force] [--restart]
      Clears the projections' tables, snapshots, inbox and offsets and replays every command topic
      from its first record. Stop the nodes first (--force skips that check).
  replay-partition --topic T --partition P [--force] [--restart]
      The same for one partition of one command topic (T: parlay.events, clob.commands,
      wallet.commands; the TOPIC_PREFIX is added).
  inspect-actor --kind K --key KEY
      The actor's snapshot plus the commands the log holds past it, run through its decider
      (kinds: parlay, vault, market-book, wallet). Commits nothing.
  jobs
      The persisted cursors of reconcile / rebuild / replay runs.
  dead-letters [--topic T] [--source PREFIX] [--pending] [--limit N]
      Dead letters, oldest first (default limit 100, at most 10000): source, topic, partition,
      offset and key of runtime ones, reason, payload, when, when replayed. --topic T: those of a
      command topic (the TOPIC_PREFIX is added); --source: those whose source starts with PREFIX
      (e.g. webhook:); --pending: not replayed yet.
  replay-dead-letters --id N [--force] | --all [--topic T] [--source PREFIX]
      Re-sends runtime dead letters (records a partition went past) to their topic with their key,
      then marks them replayed (the row stays). --all: every one not replayed yet that the filters
      select; --force: replay one already replayed. Webhook dead letters: use reconcile.

common options: --quiet (no progress), --help`;

export async function main(argv: string[], env: Record<string, string | undefined> = environment()): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'since-slot': { type: 'string' },
      'until-slot': { type: 'string' },
      rpc: { type: 'string' },
      'webhook-url': { type: 'string' },
      'webhook-secret': { type: 'string' },
      page: { type: 'string' },
      batch: { type: 'string' },
      'pace-ms': { type: 'string' },
      restart: { type: 'boolean' },
      force: { type: 'boolean' },
      topic: { type: 'string' },
      partition: { type: 'string' },
      kind: { type: 'string' },
      key: { type: 'string' },
      quiet: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      source: { type: 'string' },
      pending: { type: 'boolean' },
      limit: { type: 'string' },
      id: { type: 'string' },
      all: { type: 'boolean' },
    },
  });
  const command = positionals[0];
  if (!command || values.help) {
    process.stdout.write(`${HELP}\n`);
    return command || values.help ? 0 : 2;
  }
  const int = (name: string, v: string | undefined, required = false): number | undefined => {
    if (v === undefined) {
      if (required) throw new OpsError(`--${name} is required`);
      return undefined;
    }
    if (!/^\d+$/.test(v)) throw new OpsError(`--${name} must be a non-negative integer`);
    return Number(v);
  };

  // Ctrl-C: stop after the current step (the cursor is kept); a second one exits at once.
  const abort = new AbortController();
  let sigints = 0;
  const onSigint = () => {
    if (++sigints > 1) process.exit(130);
    process.stderr.write('\ninterrupting after the current step; run the same command again to resume\n');
    abort.abort();
  };
  process.on('SIGINT', onSigint);
  let ctx: OpsContext | null = null;
  try {
    const needKafka = command !== 'jobs' && command !== 'dead-letters' && !(command === 'reconcile' && values['webhook-url']);
    ctx = await openContext(env, { needKafka });
    const common = { signal: abort.signal, quiet: values.quiet, force: values.force, restart: values.restart };
    let out: any;
    switch (command) {
      case 'reconcile':
        out = await reconcile(ctx, {
          ...common,
          sinceSlot: int('since-slot', values['since-slot'], true)!,
          untilSlot: int('until-slot', values['until-slot']),
          rpcUrl: values.rpc,
          webhookUrl: values['webhook-url'],
          webhookSecret: values['webhook-secret'] ?? env.PARLAY_WEBHOOK_AUTH_SECRET,
          page: int('page', values.page),
          batch: int('batch', values.batch),
          paceMs: int('pace-ms', values['pace-ms']),
        });
        break;
      case 'rebuild-read-models':
        out = await rebuildReadModels(ctx, common);
        break;
      case 'replay-partition':
        if (!values.topic) throw new OpsError('--topic is required');
        out = await replayPartition(ctx, values.topic, int('partition', values.partition, true)!, common);
        break;
      case 'inspect-actor': {
        const kind = values.kind ?? positionals[1];
        const key = values.key ?? positionals[2];
        if (!kind || !key) throw new OpsError('--kind and --key are required');
        out = await inspectActor(ctx, kind, key, common);
        break;
      }
      case 'jobs':
        out = await listJobs(ctx.db());
        break;
      case 'dead-letters':
        out = await listDeadLetters(ctx, {
          topic: values.topic,
          source: values.source,
          pending: values.pending,
          limit: int('limit', values.limit),
        });
        break;
      case 'replay-dead-letters':
        out = await replayDeadLetters(ctx, { ...common, id: values.id, all: values.all, topic: values.topic, source: values.source });
        break;
      default:
        throw new OpsError(`unknown command ${command}\n\n${HELP}`);
    }
    process.stdout.write(`${toJson(out)}\n`);
    if (out?.status === 'interrupted') return 130;
    if (command === 'reconcile' && out.deferred?.length) return 3;
    return 0;
  } catch (e) {
    if (e instanceof OpsError || e instanceof ConfigError) {
      process.stderr.write(`${e.message}\n`);
      return e instanceof OpsError ? e.exitCode : 2;
    }
    process.stderr.write(`failed: ${(e as Error)?.stack ?? e}\n`);
    return 1;
  } finally {
    process.off('SIGINT', onSigint);
    await ctx?.close().catch(() => undefined);
  }
}

const invokedDirectly = (() => {
  const arg = process.argv[1] ?? '';
  return /(?:^|[/\\])(ops\.ts|parlay-clob-ops(?:\.m?js)?)$/.test(arg);
})();
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`${err?.stack ?? err}\n`);
      process.exit(1);
    },
  );
}

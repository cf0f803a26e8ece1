// The event decoder vouches for its commands (src/parlay/decode.ts): they reach their worker in the
// same process without a second pass through the topic's schema. That holds only if the schema
// accepts, unchanged, every command the decoder can emit. Here every event of the IDL is encoded
// with arbitrary values of its fields' types (edges included: 0, 2^63, 2^64 - 1, negative times,
// empty and oversized leg lists) inside transactions the webhook's schema accepts, and whatever
// decodes is parsed by the schema and compared.
import test from 'ava';
import fc from 'fast-check';
import { BN } from '@coral-xyz/anchor';
import { PublicKey } from '@solana/web3.js';
import { idl, PARLAY_PROGRAM_ID } from '../../../src/chain/idl.ts';
import { decodeTransaction } from '../../../src/parlay/decode.ts';
import { rawTransaction } from '../../../src/parlay/webhook-schema.ts';
import { parlayCommand, parlayCommands, vaultCommand, vaultCommands } from '../../../topics/parlay-events.ts';
import { eventLine, sig } from '../../helpers/events.ts';

type IdlType = string | { vec?: IdlType; defined?: { name: string } };

const int = (bits: number, signed: boolean) =>
  fc.bigInt(signed ? -(1n << BigInt(bits - 1)) : 0n, signed ? (1n << BigInt(bits - 1)) - 1n : (1n << BigInt(bits)) - 1n);
/** Mostly values the program emits (small, so that an event's every field is one the mirror takes at once), sometimes any. */
const mostly = <T>(usual: fc.Arbitrary<T>, any: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: usual, weight: 6 }, { arbitrary: any, weight: 1 });

/** Arbitrary values of an IDL type, as Anchor's coder takes them. */
function valueOf(t: IdlType): fc.Arbitrary<unknown> {
  if (typeof t === 'string') {
    switch (t) {
      case 'u8':
        return mostly(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 255 }));
      case 'u16':
        return mostly(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 65_535 }));
      case 'u32':
        return mostly(fc.integer({ min: 1, max: 999_999 }), fc.integer({ min: 0, max: 4_294_967_295 }));
      case 'u64':
        return mostly(fc.bigInt(0n, 1n << 40n), int(64, false)).map((v) => new BN(v.toString()));
      case 'i64':
        return mostly(fc.bigInt(0n, 1n << 32n), int(64, true)).map((v) => new BN(v.toString()));
      case 'bool':
        return fc.boolean();
      case 'pubkey':
        return fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => new PublicKey(b));
      case 'bytes':
        return fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));
    }
    throw new Error(`no arbitrary for the IDL type ${t}`);
  }
  if (t.vec) return mostly(fc.array(valueOf(t.vec), { minLength: 1, maxLength: 3 }), fc.array(valueOf(t.vec), { maxLength: 70 }));
  if (t.defined) return structOf(t.defined.name);
  throw new Error(`no arbitrary for the IDL type ${JSON.stringify(t)}`);
}

function structOf(name: string): fc.Arbitrary<Record<string, unknown>> {
  const def = idl.types!.find((x) => x.name === name)!;
  const fields = (def.type as { fields: { name: string; type: IdlType }[] }).fields;
  return fc.record(Object.fromEntries(fields.map((f) => [f.name, valueOf(f.type)])));
}

// A creation has the most fields, so the fewest come out all within what the mirror takes: drawn
// four times as often, it decodes ~70 times a run (1 in 4 seeds fell under 20 at equal weights).
const anEvent = fc.oneof(
  ...idl.events!.map((e) => ({
    arbitrary: structOf(e.name).map((data) => eventLine(e.name, data)),
    weight: e.name === 'ParlayCreated' ? 4 : 1,
  })),
);

const aTransaction = fc.record({
  label: fc.string({ maxLength: 12 }),
  slot: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  indexWithinBlock: fc.option(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { nil: undefined }),
  lines: fc.array(anEvent, { minLength: 1, maxLength: 4 }),
});

test('every command the decoder emits is one its schema accepts unchanged, and is taken as parsed', (t) => {
  const pid = PARLAY_PROGRAM_ID.toBase58();
  const seen = { decoded: new Map<string, number>(), refused: 0 };
  fc.assert(
    fc.property(aTransaction, ({ label, slot, indexWithinBlock, lines }) => {
      const tx = rawTransaction.parse({
        slot,
        ...(indexWithinBlock === undefined ? {} : { indexWithinBlock }),
        meta: { err: null, logMessages: [`Program ${pid} invoke [1]`, ...lines, `Program ${pid} success`] },
        transaction: { signatures: [sig(label)] },
      });
      const d = decodeTransaction(tx, pid);
      if (d.events.length + d.undecodable.length !== lines.length) return false;
      for (const e of d.events) seen.decoded.set(e.name, (seen.decoded.get(e.name) ?? 0) + 1);
      seen.refused += d.undecodable.length;
      for (const u of d.undecodable) if (!u.reason) return false;
      for (const c of d.commands) {
        const schema = c.target === 'parlay' ? parlayCommand : vaultCommand;
        const parsed = schema.safeParse(c.cmd);
        if (!parsed.success) throw new Error(`${JSON.stringify(c.cmd)}: ${parsed.error.message}`);
        t.deepEqual(parsed.data, c.cmd as never);
        const checked = c.target === 'parlay' ? parlayCommands : vaultCommands;
        if (checked.parse(c.cmd) !== c.cmd) return false;
      }
      return true;
    }),
    { numRuns: 1000 },
  );
  // Not vacuous: every event of the IDL decodes many times, and values past what the mirror takes are refused.
  for (const e of idl.events!) t.true((seen.decoded.get(e.name) ?? 0) >= 20, `${e.name} decoded ${seen.decoded.get(e.name) ?? 0} times`);
  t.true(seen.refused > 100, `refused ${seen.refused}`);
});

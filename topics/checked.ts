// A topic schema whose parses are remembered: a value this process parsed is not parsed again when
// it reaches its consumer in the same process (the in-process bus hands objects over as they are).
// Only the parse's own output is marked: a fresh object nobody else held when it was made (or, vouched
// for, one made by code shown to make only what the schema accepts). Anything else (text from
// Kafka, a copy, an object built by hand) is parsed.
import type { z } from 'zod';

export interface CheckedSchema<S extends z.ZodType> {
  /** Parses `v` (as `safeParse`); a success's output is remembered as parsed. */
  check(v: unknown): z.ZodSafeParseResult<z.output<S>>;
  /** `v` itself when `check` made it (or `vouch` marked it), else `v` parsed (throws on what the schema refuses). */
  parse(v: unknown): z.output<S>;
  /**
   * Marks `v` as parsed without parsing it, and returns it: only for values made by code whose every
   * output the schema accepts unchanged (its own guards refuse the rest), as a property test over all
   * of that code's inputs shows (the event decoder: test/unit/parlay/decoded-commands.test.ts).
   */
  vouch<T extends z.output<S>>(v: T): T;
}

const PARSED = Symbol('parsed by');

/**
 * `asIs`, when given, is a hand-written check of the schema's most frequent shape: it answers the
 * value itself when the schema would accept it unchanged, or undefined (the value is then parsed:
 * the schema also gives the reasons). It must never accept what the schema refuses or would
 * change (a property test binds the two: test/unit/topics/parlay-created-as-is.test.ts).
 */
export function checkedSchema<S extends z.ZodType>(schema: S, asIs?: (v: unknown) => z.output<S> | undefined): CheckedSchema<S> {
  // The mark: a non-enumerable symbol property whose value is the schema that made the object. JSON
  // cannot carry it, a spread or Object.assign does not copy it, and no other schema's mark passes.
  // (A WeakSet of parsed objects did the same, but a weak collection holding young objects made
  // every young-generation collection walk it: ~2% of the ingest path's CPU.)
  return {
    check(v) {
      const r = schema.safeParse(v);
      if (r.success && typeof r.data === 'object' && r.data !== null) Object.defineProperty(r.data, PARSED, { value: schema });
      return r;
    },
    vouch(v) {
      Object.defineProperty(v, PARSED, { value: schema });
      return v;
    },
    parse(v) {
      if (typeof v === 'object' && v !== null && (v as { [PARSED]?: unknown })[PARSED] === schema) return v as z.output<S>;
      return asIs?.(v) ?? schema.parse(v);
    },
  };
}

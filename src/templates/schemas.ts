// Request and response schemas of the parlay template routes (issue 7), in one place so that the
// OpenAPI document can register them. Requests are validated with these; responses are described.
import { z } from 'zod';

const outcome = z
  .string()
  .transform((s) => s.toUpperCase())
  .pipe(z.enum(['YES', 'NO']))
  .describe('the selected outcome, YES or NO (case-insensitive)');
const conditionId = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'must be a condition id: 0x + 64 hex digits')
  .transform((s) => s.toLowerCase());
/** A probability strictly between 0 and 1 with up to 6 places → micro. */
const probability = z.union([z.string(), z.number()]).transform((v, ctx) => {
  const frac = /^0?\.(\d{1,6})$/.exec(String(v))?.[1] ?? null;
  const micro = frac ? Number(frac.padEnd(6, '0')) : 0;
  if (!frac || micro <= 0 || micro >= 1_000_000) {
    ctx.addIssue({ code: 'custom', message: 'must be a decimal strictly between 0 and 1 with at most 6 places' });
    return z.NEVER;
  }
  return micro;
});

export const marketLegInput = z
  .object({
    condition_id: conditionId.describe('a market of the catalog'),
    selected_outcome: outcome,
  })
  .strict();

export const demoLegInput = z
  .object({
    demo: z.literal(true).describe('a display-only leg: never submittable'),
    market_id: z.number().int().negative().min(-Number.MAX_SAFE_INTEGER).describe('a synthetic negative market id'),
    question: z.string().min(1).max(2000),
    selected_outcome: outcome,
    probability: probability.describe('the displayed probability of the selected outcome, e.g. "0.35"'),
  })
  .strict();

export const templateLegInput = z.union([marketLegInput, demoLegInput]);

/** Two or more legs, no market (or demo market id) twice. The config's max_legs is checked against the mirror. */
const legs = z
  .array(templateLegInput)
  .min(2, 'a template needs at least 2 legs')
  .max(255, 'at most 255 legs')
  .superRefine((ls, ctx) => {
    const seen = new Set<string>();
    ls.forEach((l, i) => {
      const k = 'demo' in l ? `demo:${l.market_id}` : l.condition_id;
      if (seen.has(k))
        ctx.addIssue({
          code: 'custom',
          path: [i],
          message: `the same market appears twice (${'demo' in l ? l.market_id : l.condition_id})`,
        });
      seen.add(k);
    });
  });

const fields = {
  name: z.string().trim().min(1, 'must not be empty').max(200),
  description: z.string().max(4000),
  display_order: z.number().int().min(-1_000_000).max(1_000_000),
  is_active: z.boolean(),
  legs,
};

export const templateCreate = z
  .object({
    name: fields.name,
    description: fields.description.default(''),
    display_order: fields.display_order.default(0),
    is_active: fields.is_active.default(true),
    legs: fields.legs,
  })
  .strict();

export const templatePatch = z
  .object({
    name: fields.name.optional(),
    description: fields.description.optional(),
    display_order: fields.display_order.optional(),
    is_active: fields.is_active.optional(),
    legs: fields.legs.optional(),
  })
  .strict()
  .refine((p) => Object.keys(p).length > 0, 'give at least one field to change');

/** Path parameter {pk}: a positive integer. */
export const templatePk = z.string().regex(/^[1-9]\d{0,17}$/);

/** POST /api/markets/parlay-quote/: a template or explicit legs, and a stake in micro-units. */
export const quoteRequest = z
  .object({
    template_id: z.number().int().positive().optional(),
    legs: z.array(templateLegInput).min(2).max(255).optional(),
    stake: z
      .union([
        z.string().regex(/^\d{1,18}$/, 'must be an integer of micro-units'),
        z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
      ])
      .transform((v) => BigInt(v))
      .describe('micro-units of collateral'),
  })
  .strict()
  .refine((q) => (q.template_id === undefined) !== (q.legs === undefined), 'give either template_id or legs');

export type TemplateCreate = z.infer<typeof templateCreate>;
export type TemplatePatch = z.infer<typeof templatePatch>;
export type TemplateLegInput = z.infer<typeof templateLegInput>;
export type QuoteRequest = z.infer<typeof quoteRequest>;

// Responses (documentation; strict: a field not named here is a mismatch).

const decimal = (places: number) =>
  z
    .string()
    .regex(new RegExp(`^\\d+\\.\\d{${places}}$`))
    .meta({ description: `decimal string, ${places} places` });
const timestamp = z.string().meta({ description: 'ISO 8601 UTC timestamp', examples: ['2026-11-21T10:00:00.000Z'] });

export const templateLeg = z
  .strictObject({
    leg_index: z.number().int(),
    demo: z.boolean().meta({ description: 'a display-only leg: never submittable' }),
    condition_id: z.string().nullable().meta({ description: 'the catalog market; null for a demo leg' }),
    market_id: z
      .number()
      .int()
      .nullable()
      .meta({ description: "the market's on_chain_market_id; negative for a demo leg; null while the catalog has none" }),
    market_address: z.string().nullable().meta({ description: 'null for a demo leg' }),
    question: z.string(),
    selected_outcome: z.enum(['YES', 'NO']),
    probability: decimal(6)
      .nullable()
      .meta({ description: 'as of the last refresh (6 places); null before one or when the market has no price' }),
    probability_source: z.enum(['midpoint', 'last_trade', 'reference', 'demo']).nullable().meta({
      description: 'midpoint of best bid and ask, else the last trade, else the catalog reference price; demo: given by the admin',
    }),
    market_status: z.enum(['open', 'closed', 'resolved']).nullable(),
    start_time: timestamp.nullable(),
  })
  .meta({ id: 'ParlayTemplateLeg' });

export const template = z
  .strictObject({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    display_order: z.number().int(),
    is_active: z.boolean(),
    legs: z.array(templateLeg),
    combined_probability: decimal(12)
      .nullable()
      .meta({ description: 'product of the leg probabilities, 12 places (as the parlay field); null until every leg has a price' }),
    payout_per_unit: decimal(6)
      .nullable()
      .meta({ description: "indicative payout of a 1-unit stake after the program's house edge, in units" }),
    house_edge_bps: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'the mirrored config house edge used; null while the config is unknown' }),
    submittable: z.boolean().meta({ description: 'false when a leg is a demo leg or its market has no on-chain id or address' }),
    stale: z
      .boolean()
      .meta({ description: 'a leg market started, closed, resolved or has no price (or the config forbids the legs): not suggested' }),
    stale_reason: z.string().nullable(),
    refreshed_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ParlayTemplate' });

export const suggestionLeg = z
  .strictObject({
    demo: templateLeg.shape.demo,
    condition_id: templateLeg.shape.condition_id,
    market_id: templateLeg.shape.market_id,
    market_address: templateLeg.shape.market_address,
    question: z.string(),
    selected_outcome: z.enum(['YES', 'NO']),
    probability: decimal(6).nullable(),
  })
  .meta({ id: 'ParlaySuggestionLeg' });

export const suggestion = z
  .strictObject({
    id: z.number().int(),
    name: z.string(),
    description: z.string(),
    display_order: z.number().int(),
    combined_probability: template.shape.combined_probability,
    payout_per_unit: template.shape.payout_per_unit,
    house_edge_bps: template.shape.house_edge_bps,
    submittable: template.shape.submittable,
    refreshed_at: timestamp.nullable(),
    legs: z.array(suggestionLeg),
  })
  .meta({ id: 'ParlaySuggestion' });

export const templateResponse = z.strictObject({ data: template });
export const templateListResponse = z.strictObject({ data: z.array(template) });
export const refreshAllResponse = z.strictObject({ refreshed: z.number().int(), stale: z.number().int(), data: z.array(template) });
export const suggestionsResponse = z.strictObject({ data: z.array(suggestion) });

export const quote = z
  .strictObject({
    legs: z.array(
      z.strictObject({
        market_id: z.number().int(),
        market_address: z.string(),
        condition_id: z.string(),
        selected_outcome: z.enum(['YES', 'NO']),
        probability: decimal(6),
        probability_source: z.enum(['midpoint', 'last_trade', 'reference']),
      }),
    ),
    stake: z.number().int().meta({ description: 'micro-units' }),
    combined_probability: decimal(12),
    potential_payout: z.number().int().meta({ description: 'micro-units, as create_parlay would compute it now' }),
    house_edge_bps: z.number().int(),
  })
  .meta({ id: 'ParlayQuote' });
export const quoteResponse = z.strictObject({ data: quote });

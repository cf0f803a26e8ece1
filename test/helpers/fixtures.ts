// The sample webhook deliveries of docs/contracts/service.md, kept in test/fixtures/webhooks
// (WEBHOOK_FIXTURES points elsewhere).
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
export const FIXTURES_DIR = process.env.WEBHOOK_FIXTURES ?? path.resolve(here, '../fixtures/webhooks');

export function fixture(prefix: string): any[] {
  const file = readdirSync(FIXTURES_DIR).find((f) => f.startsWith(prefix) && f.endsWith('.json'));
  if (!file) throw new Error(`fixture ${prefix} not found in ${FIXTURES_DIR}`);
  return JSON.parse(readFileSync(path.join(FIXTURES_DIR, file), 'utf8'));
}

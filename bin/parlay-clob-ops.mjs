#!/usr/bin/env node
// `npx parlay-clob-ops <command>`: the recovery tools of src/cli/ops.ts (which runs itself when
// started under this name), loaded through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/ops.ts');

// Runs one open loop (bench/open-loop.ts) for bench/open-loop-process.ts: its options and requests
// from the directory given, its result written back there as result.json.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLoop } from './open-loop.ts';
import { unpackRequests, type OpenLoopOptions } from './open-loop-process.ts';

const dir = process.argv[2];
const options = JSON.parse(readFileSync(join(dir, 'options.json'), 'utf8')) as Omit<OpenLoopOptions, 'requests'>;
const requests = unpackRequests(readFileSync(join(dir, 'requests.bin')));
const { warmupSeconds = 0, ...loop } = options;
const warm = Math.round(loop.rate * warmupSeconds);
if (warm) await openLoop({ ...loop, seconds: warmupSeconds, requests: requests.slice(0, warm) });
const result = await openLoop({ ...loop, requests: requests.slice(warm) });
result.index = result.index.map((i) => i + warm); // indices into the requests as given
writeFileSync(join(dir, 'result.json'), JSON.stringify(result));
process.exit(0);

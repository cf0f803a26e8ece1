// Loaded into every ava worker (package.json `ava.require`). Once a file's tests and teardowns have
// run, its worker exits even if something it used (a client's reconnect timer, a socket) still holds
// the event loop: ava waits for the worker's exit, so one such handle would otherwise stall the run.
import { registerCompletionHandler } from 'ava';

registerCompletionHandler(() => process.exit());

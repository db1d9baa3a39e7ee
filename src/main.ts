/**
 * Process entry of `npm start`: `rollcall serve` with the configuration from the environment.
 */
import { runCli } from './cli/index.ts';

await runCli(['serve', ...process.argv.slice(2)]);

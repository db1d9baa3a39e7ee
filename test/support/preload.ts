/**
 * Loaded into every test process by scripts/test.ts (`--import`): new password hashes cost
 * scrypt N = 2^10 instead of 2^17 (src/oauth/passwords.ts SCRYPT_COST). The suite signs in and
 * sets passwords thousands of times; a derivation of a quarter of a second each was a third of the
 * console tests' time. A hash keeps its own N, so everything else is as served.
 * test/unit/password-cost.test.ts checks that a process without this file hashes at 2^17.
 */
import { SCRYPT_COST } from '../../src/oauth/passwords.ts';

SCRYPT_COST.N = 1024;

/** The Rollcall client: see README.md. */
export const CLIENT_VERSION = '0.1.0';

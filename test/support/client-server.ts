/**
 * A real Rollcall listening on 127.0.0.1 (port 0) for the client's tests (test/client): the test
 * app of test/support/app.ts, served over real HTTP so the client goes through fetch; every answer
 * is checked against the app's OpenAPI document like the injected ones.
 */
import type { AddressInfo } from 'node:net';
import { createTestApp } from './app.ts';
import { installSocketCheck } from './openapi-check.ts';
import type { TestApp, TestAppOptions } from './app.ts';

export interface ListeningApp extends TestApp {
  /** http://127.0.0.1:<port> */
  readonly origin: string;
}

export async function listeningApp(options: TestAppOptions = {}): Promise<ListeningApp> {
  const t = await createTestApp(options);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  // Answers over real sockets are checked against the OpenAPI document too (openapi-check.ts).
  installSocketCheck(t.app, t.app.server);
  const { port } = t.app.server.address() as AddressInfo;
  return Object.assign(t, { origin: `http://127.0.0.1:${port}` });
}

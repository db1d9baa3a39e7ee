/**
 * For console tests: a connection added and its token issued through the Connections pages, as
 * an admin's browser does it (the form, the 303, the page that shows the token once).
 */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { hiddenFields } from './oauth.ts';
import type { PageSession } from './oauth.ts';

/** Adds a connection named `name` on /console/connections; answers its page's path. */
export async function addConnectionInConsole(page: PageSession, name: string, provider = ''): Promise<string> {
  const list = await page.get('/console/connections');
  const added = await page.post('/console/connections', { ...hiddenFields(list.body, '/console/connections'), name, provider });
  assert.equal(added.statusCode, 303, added.body);
  return String(added.headers.location).replace(/\?.*$/, '');
}

export interface IssuedInConsole {
  /** The POST's answer: 303 to the page that shows the token, or 400 with the form's error. */
  readonly posted: LightMyRequestResponse;
  /** The page the 303 leads to (absent when the POST was refused). */
  readonly shown?: LightMyRequestResponse;
  readonly token?: string;
}

/** Issues a token of the connection at `path` (its page), following the redirect once. */
export async function issueInConsole(page: PageSession, path: string, form: Record<string, string>): Promise<IssuedInConsole> {
  const connection = await page.get(path);
  const posted = await page.post(`${path}/tokens`, { ...hiddenFields(connection.body, `${path}/tokens`), expiresIn: '30d', ...form });
  if (posted.statusCode !== 303) return { posted };
  const shown = await page.get(String(posted.headers.location));
  const token = /<code id="new-token">(rc_at_[A-Za-z0-9_-]+)<\/code>/.exec(shown.body)?.[1];
  return { posted, shown, ...(token ? { token } : {}) };
}

/**
 * The events layer's failures: the request's own fault (a wrong value), a subscription that is
 * not there, a change that lost a race with another (retry it), or events the retention already
 * pruned. Each carries the HTTP status it means and,
 * for a wrong value, its code; the message is safe to show the client. This module knows no
 * protocol: the surfaces render these errors (the events API and the console in the SCIM error
 * shape through `scimErrorOf` in scim/errors.ts, the CLI as a line), so the events layer never
 * imports the SCIM layer above it.
 */

/** The code of a wrong value, named as SCIM names it (RFC 7644 section 3.12). */
export type EventsErrorCode = 'invalidValue';

export class EventsError extends Error {
  readonly status: 400 | 404 | 409 | 410;
  readonly code: EventsErrorCode | undefined;

  constructor(status: 400 | 404 | 409 | 410, detail: string, code?: EventsErrorCode) {
    super(detail);
    this.name = 'EventsError';
    this.status = status;
    this.code = code;
  }
}

/** A value the request gave that the events layer cannot take. */
export const invalidValue = (detail: string): EventsError => new EventsError(400, detail, 'invalidValue');

/** A subscription (or other events resource) of the team that does not exist. */
export const notFound = (detail: string): EventsError => new EventsError(404, detail);

/** The change was made from a state another change replaced meanwhile: nothing was written; retry. */
export const conflict = (detail: string): EventsError => new EventsError(409, detail);

/** Events the retention already removed: the reader must resynchronise. */
export const pruned = (detail: string): EventsError => new EventsError(410, detail);

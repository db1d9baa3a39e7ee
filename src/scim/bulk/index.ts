/**
 * SCIM Bulk (RFC 7644 3.7): parse.ts checks a BulkRequest, plan.ts orders its operations by their
 * bulkId references, run.ts runs them one transaction each through dispatch.ts, gate.ts holds a
 * team to its concurrent Bulks. Nothing here knows HTTP (src/http/scim-bulk.ts serves it).
 */
export { BULK_MAX_OPERATIONS, BULK_MAX_PAYLOAD, BULK_PATH, BULK_REQUEST, BULK_RESPONSE, parseBulk, payloadTooLarge, tooManyOperations } from './parse.ts';
export type { BulkOperation, ParsedBulk } from './parse.ts';
export { orderOperations, planBulk, referencesOf } from './plan.ts';
export type { BulkPlan, PlannedOperation } from './plan.ts';
export { BULK_PACING, BulkAborted, failedWith, idOfLocation, isFailure, runBulk } from './run.ts';
export type { BulkJournal, BulkObserver, BulkOperationResult, BulkPacing, BulkResponse } from './run.ts';
export { enterBulk } from './gate.ts';

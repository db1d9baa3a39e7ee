/** @rollcall/client: a typed client for Rollcall (see README.md). */
export const CLIENT_VERSION = '0.1.0';
export { Rollcall } from './client.ts';
export type { BulkOptions, RollcallOptions, ResourceType } from './client.ts';
export { ResourceClient } from './resources.ts';
export type { IterateOptions, ReadOptions, WriteOptions } from './resources.ts';
export { Transport, retryAfterMs } from './http.ts';
export type { RetryOptions, TransportOptions } from './http.ts';
export { Events } from './events.ts';
export type { FeedEvent, FeedPage, FollowOptions } from './events.ts';
export { Attribute, Filter, and, has, literal, not, or, valuePath, where } from './filter.ts';
export type { FilterPath, FilterValue } from './filter.ts';
export { verifySet } from './set.ts';
export type { SetClaims, SetEventPayload, VerifySetOptions } from './set.ts';
export { verifyWebhook } from './webhook.ts';
export type { HeaderSource, VerifyWebhookOptions, WebhookEvent } from './webhook.ts';
export { FeedPrunedError, PagingError, RollcallError, SetVerificationError, WebhookVerificationError } from './errors.ts';
export * from './types.ts';

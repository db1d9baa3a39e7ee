/**
 * One SCIM endpoint (/Users, /Groups, or a team's own resource type): get, create, replace,
 * patch, delete, list (one page), search (POST .search) and iterate (every match, paged with
 * RFC 9865 cursors; index paging when the server sends no cursor).
 */
import { PagingError } from './errors.ts';
import type { Transport } from './http.ts';
import { PATCH_OP, SEARCH_REQUEST } from './types.ts';
import type { ListQuery, ListResponse, PatchOp, PatchOperation, ResourceBase } from './types.ts';

export interface ReadOptions {
  attributes?: string[];
  excludedAttributes?: string[];
  signal?: AbortSignal;
}

export interface WriteOptions extends ReadOptions {
  /** ETag the resource must still have (If-Match), e.g. `resource.meta.version`. */
  ifMatch?: string;
}

export interface IterateOptions extends Omit<ListQuery, 'startIndex' | 'cursor'> {
  signal?: AbortSignal;
  /** Use POST .search instead of GET (keeps long filters out of URLs and logs). */
  viaSearch?: boolean;
}

const projection = (o: ReadOptions | undefined) => ({
  attributes: o?.attributes?.join(','),
  excludedAttributes: o?.excludedAttributes?.join(','),
});

function listParams(query: ListQuery): Record<string, string | number | undefined> {
  return {
    filter: query.filter === undefined ? undefined : String(query.filter),
    sortBy: query.sortBy,
    sortOrder: query.sortOrder,
    startIndex: query.startIndex,
    cursor: query.cursor,
    count: query.count,
    ...projection(query),
  };
}

export class ResourceClient<R extends ResourceBase> {
  readonly #http: Transport;
  /** The endpoint under /v2/scim, e.g. '/Users'. */
  readonly endpoint: string;
  /** The core schema URN sent on create/replace when the body names none. */
  readonly #schema: string | undefined;

  constructor(http: Transport, endpoint: string, schema?: string) {
    this.#http = http;
    this.endpoint = endpoint.startsWith('/') ? endpoint : `/${endpoint}`;
    this.#schema = schema;
  }

  #path(id?: string): string {
    return `/v2/scim${this.endpoint}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`;
  }

  #withSchemas<B extends object>(body: B): B {
    if (this.#schema === undefined || (body as { schemas?: unknown }).schemas !== undefined) return body;
    return { schemas: [this.#schema], ...body };
  }

  async get(id: string, options?: ReadOptions): Promise<R> {
    return (await this.#http.request<R>({ method: 'GET', path: this.#path(id), query: projection(options), ...(options?.signal ? { signal: options.signal } : {}) })).body;
  }

  async create(resource: Omit<R, 'id' | 'meta'>, options?: ReadOptions): Promise<R> {
    return (await this.#http.request<R>({ method: 'POST', path: this.#path(), query: projection(options), body: this.#withSchemas(resource), ...(options?.signal ? { signal: options.signal } : {}) })).body;
  }

  async replace(id: string, resource: Omit<R, 'id' | 'meta'>, options?: WriteOptions): Promise<R> {
    return (await this.#http.request<R>({ method: 'PUT', path: this.#path(id), query: projection(options), body: this.#withSchemas(resource), headers: options?.ifMatch ? { 'if-match': options.ifMatch } : {}, ...(options?.signal ? { signal: options.signal } : {}) })).body;
  }

  /**
   * RFC 7644 3.5.2 PATCH. Takes the operations (or a whole PatchOp). Returns the resource, or
   * undefined when the server answers 204 (Groups without `attributes`).
   */
  async patch(id: string, operations: PatchOperation[] | PatchOp, options?: WriteOptions): Promise<R | undefined> {
    const body: PatchOp = Array.isArray(operations) ? { schemas: [PATCH_OP], Operations: operations } : operations;
    const answer = await this.#http.request<R>({ method: 'PATCH', path: this.#path(id), query: projection(options), body, headers: options?.ifMatch ? { 'if-match': options.ifMatch } : {}, ...(options?.signal ? { signal: options.signal } : {}) });
    return answer.status === 204 ? undefined : answer.body;
  }

  async delete(id: string, options?: { ifMatch?: string; signal?: AbortSignal }): Promise<void> {
    await this.#http.request({ method: 'DELETE', path: this.#path(id), headers: options?.ifMatch ? { 'if-match': options.ifMatch } : {}, ...(options?.signal ? { signal: options.signal } : {}) });
  }

  /** One page (GET with query parameters). */
  async list(query: ListQuery = {}, signal?: AbortSignal): Promise<ListResponse<R>> {
    return (await this.#http.request<ListResponse<R>>({ method: 'GET', path: this.#path(), query: listParams(query), ...(signal ? { signal } : {}) })).body;
  }

  /** One page with POST .search (RFC 7644 3.4.3): the query in the body. Safe to retry. */
  async search(query: ListQuery = {}, signal?: AbortSignal): Promise<ListResponse<R>> {
    const params = Object.fromEntries(Object.entries(listParams(query)).filter(([, v]) => v !== undefined));
    const body = { schemas: [SEARCH_REQUEST], ...params, ...(query.attributes ? { attributes: query.attributes } : {}), ...(query.excludedAttributes ? { excludedAttributes: query.excludedAttributes } : {}) };
    return (await this.#http.request<ListResponse<R>>({ method: 'POST', path: `${this.#path()}/.search`, body, idempotent: true, ...(signal ? { signal } : {}) })).body;
  }

  /**
   * Every match, page after page. Asks for cursor paging (RFC 9865: `cursor` empty, then each
   * `nextCursor`); when the server answers without cursors, continues with startIndex. A server
   * whose paging makes no progress (a `nextCursor` it gave before; an index page that starts
   * before the one asked for, or repeats the previous page) ends the walk with a PagingError
   * rather than a loop that never ends.
   */
  async *iterate(query: IterateOptions = {}): AsyncGenerator<R, void, undefined> {
    const { signal, viaSearch, ...rest } = query;
    const page = (q: ListQuery) => (viaSearch ? this.search(q, signal) : this.list(q, signal));
    let answer = await page({ ...rest, cursor: '' });
    // A server that pages by cursor answers without startIndex or with a cursor; one that
    // ignores `cursor` answers an index page (startIndex 1), and paging goes on by index.
    const byCursor = answer.startIndex === undefined || answer.nextCursor !== undefined || answer.previousCursor !== undefined;
    const cursors = new Set<string>();
    let startIndex = 1;
    let previousIds = '';
    for (;;) {
      const got = answer.Resources?.length ?? 0;
      const ids = (answer.Resources ?? []).map((r) => r.id).join('\n');
      if (!byCursor && startIndex > 1) {
        if (answer.startIndex !== undefined && answer.startIndex < startIndex) throw new PagingError(`${this.#path()}: asked for startIndex ${startIndex}, the server answered startIndex ${answer.startIndex}; it does not page by index, stopping`);
        if (got > 0 && ids === previousIds) throw new PagingError(`${this.#path()}: the page at startIndex ${startIndex} added nothing (the previous page again); stopping`);
      }
      previousIds = ids;
      for (const resource of answer.Resources ?? []) yield resource;
      if (byCursor) {
        const next = answer.nextCursor;
        if (next === undefined || next === '') return;
        if (cursors.has(next)) throw new PagingError(`${this.#path()}: the server gave nextCursor ${JSON.stringify(next)} again; stopping instead of reading the same pages for ever`);
        cursors.add(next);
        answer = await page({ ...rest, cursor: next });
        continue;
      }
      startIndex = (answer.startIndex ?? startIndex) + got;
      const total = answer.totalResults;
      if (got === 0 || (total !== undefined && startIndex > total)) return;
      answer = await page({ ...rest, startIndex });
    }
  }
}

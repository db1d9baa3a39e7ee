/**
 * Runs compiled templates (statements.ts) on PostgreSQL. A statement compiled once
 * (`Template.fixed`: the bounded set of every request's hot statements) runs as a named prepared
 * statement wherever it runs: each pooled connection parses and plans it on first use, then only
 * binds and executes it (node-postgres keeps the names per connection). The names are kept per
 * template, on the storage's driver (pg-driver.ts `PgDriver`); a name is derived from the
 * template's name and a hash of its SQL text, so two texts never share one. Outside a transaction
 * a template goes straight to the driver's pool, skipping Kysely's executor (its connection
 * provider and promise hops); inside one it runs on the transaction's connection through Kysely,
 * carrying its template (statements.ts `TemplateQuery`). List shapes are many and come and go
 * (statements.ts `SHAPE_CACHE_SIZE`): they run unnamed, or every connection would keep every shape
 * it ever saw, except the hot lookups by value. A shape whose plan does not depend on its values
 * (`Shaped.preparable`: a first page filtered by equalities, such as `userName eq`) gets a name
 * once it has run HOT_SHAPE_USES times, and keeps it; at most MAX_NAMED_SHAPES shapes ever get
 * one, so a connection keeps at most that many besides the fixed statements.
 * Should a migration change a table under a prepared statement (another instance upgraded the
 * schema), the statement runs unnamed from then on; a transaction caught by that is run again
 * (statements.ts `transact`; SCIM writes: scim/write.ts `runWrite`, through `isRetryable`).
 * The combinations of a transaction's deferred writes (pg-driver.ts) are compiled here from the
 * writes' query nodes and named like any statement compiled once.
 */
import { createHash } from 'node:crypto';
import { CommonTableExpressionNameNode, CommonTableExpressionNode, WithNode } from 'kysely';
import type { InsertQueryNode, PostgresQueryCompiler } from 'kysely';
import pg from 'pg';
import { kyselyEngine } from './statements.ts';
import type { StatementEngine, Template } from './statements.ts';

/** Runs of a preparable list shape before it is prepared by name: a shape run once or twice is not worth a connection's memory. */
export const HOT_SHAPE_USES = 8;
/** List shapes that ever get a name, per storage: every connection may keep each of them. */
export const MAX_NAMED_SHAPES = 64;
/** Combinations of deferred writes (pg-driver.ts) that ever get a name, per storage. */
export const MAX_NAMED_COMBINED = 64;
/** Combinations of deferred writes whose text is kept: as many as the code's write paths, bounded all the same. */
export const MAX_COMBINATIONS = 256;

/** The name a statement of `label` with `text` is prepared under: the text's hash keeps two texts apart. */
const preparedName = (label: string, text: string): string => `rc_${label.replace(/\W/g, '_').slice(0, 30)}_${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;

/** A sequence of deferred writes sent as one statement (pg-driver.ts): its text, built once, and its name. */
export interface Combination {
  readonly text: string;
  /** Undefined when it runs unnamed. */
  name: string | undefined;
}

/** A node of the combinations known, by the sequence of the writes' templates. */
interface CombinationNode {
  readonly next: Map<Template, CombinationNode>;
  combination?: Combination;
}

/**
 * The prepared names of one storage's statements and of its combinations of deferred writes, by
 * the identity of their templates. The storage's driver (pg-driver.ts) owns one, which every
 * connection of its pool and the lookups share.
 */
export class PreparedNames {
  /** A template's name, or null once it runs unnamed for good. */
  readonly #names = new WeakMap<Template, string | null>();
  /** Each preparable shape not named yet: its runs, and the name it gets once hot (its template leaves with the shape cache's LRU). */
  readonly #warming = new WeakMap<Template, { uses: number; readonly name: string }>();
  /** The names given to shapes: a shape compiled again (it left the LRU) takes its name back at once. */
  readonly #shapeNames = new Set<string>();
  /** Names a schema change invalidated: their statements run unnamed from then on. */
  readonly #stale = new Set<string>();
  readonly #combinations: CombinationNode = { next: new Map() };
  #combinationsKept = 0;
  #namedCombined = 0;

  /** The name `template` runs under, or undefined when it runs unnamed. */
  nameOf(template: Template): string | undefined {
    const known = this.#names.get(template);
    if (known !== undefined) return known ?? undefined;
    if (template.fixed) return this.#give(template, preparedName(template.name, template.compiled.sql));
    if (template.preparable !== true) return undefined;
    let warming = this.#warming.get(template);
    if (!warming) {
      warming = { uses: 0, name: preparedName(template.name, template.compiled.sql) };
      this.#warming.set(template, warming);
    }
    warming.uses++;
    if (this.#shapeNames.has(warming.name)) return this.#give(template, warming.name);
    if (warming.uses < HOT_SHAPE_USES) return undefined;
    if (this.#shapeNames.size >= MAX_NAMED_SHAPES) return this.#give(template, null);
    this.#shapeNames.add(warming.name);
    return this.#give(template, warming.name);
  }

  #give(template: Template, name: string | null): string | undefined {
    const given = name !== null && this.#stale.has(name) ? null : name;
    this.#names.set(template, given);
    return given ?? undefined;
  }

  /** `template` runs unnamed from now on: a schema change invalidated its prepared plan. */
  unname(template: Template): void {
    const name = this.#names.get(template);
    if (name) this.#stale.add(name);
    this.#names.set(template, null);
  }

  /**
   * The combination of `writes`, each but the last in a WITH, built by `build` the first time the
   * sequence is seen and named then: combinations are made of statements compiled once, so there
   * are only as many as the code's write paths; at most MAX_COMBINATIONS are kept and
   * MAX_NAMED_COMBINED ever get a name all the same.
   */
  combination(writes: readonly Template[], build: () => string): Combination {
    let node = this.#combinations;
    for (const write of writes) {
      let next = node.next.get(write);
      if (!next) {
        if (this.#combinationsKept >= MAX_COMBINATIONS) return { text: build(), name: undefined };
        next = { next: new Map() };
        node.next.set(write, next);
        this.#combinationsKept++;
      }
      node = next;
    }
    if (!node.combination) {
      const text = build();
      const named = this.#namedCombined < MAX_NAMED_COMBINED;
      if (named) this.#namedCombined++;
      node.combination = { text, name: named ? preparedName('writes', text) : undefined };
    }
    return node.combination;
  }

  /** `combination` runs unnamed from now on. */
  unnameCombination(combination: Combination): void {
    combination.name = undefined;
  }
}

/**
 * `templates` (deferrable writes, statements.ts `defineWrite`) as the text of one statement,
 * compiled by `compiler` from the queries Kysely built: every one but the last a part of a
 * data-modifying WITH, placeholders numbered in order, so their values go in the same order.
 */
export function combinedText(compiler: PostgresQueryCompiler, templates: readonly Template[]): string {
  const parts = templates.slice(0, -1).map((t, i) => CommonTableExpressionNode.create(CommonTableExpressionNameNode.create(`rc_write_${i}`), t.compiled.query as InsertQueryNode));
  let withNode = WithNode.create(parts[0]!);
  for (const part of parts.slice(1)) withNode = WithNode.cloneWithExpression(withNode, part);
  const last = templates.at(-1)!.compiled;
  const compiled = compiler.compileQuery({ ...(last.query as InsertQueryNode), with: withNode }, last.queryId);
  const expected = templates.reduce((n, t) => n + t.compiled.parameters.length, 0);
  if (compiled.parameters.length !== expected) throw new Error(`deferred writes ${templates.map((t) => t.name).join(', ')}: their combination binds ${compiled.parameters.length} values, not ${expected}`);
  return compiled.sql;
}

/** A client's socket, to cork: writes handed to it meanwhile leave together when it is uncorked. */
export function socketOf(client: pg.ClientBase): { cork(): void; uncork(): void } | undefined {
  const stream = (client as unknown as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection?.stream;
  return stream?.cork && stream.uncork ? (stream as { cork(): void; uncork(): void }) : undefined;
}

/** Connections a process's lookups share (`LookupConnections`), besides its pool. */
export const LOOKUP_CONNECTIONS = 2;

/** One shared connection and the answers it owes. */
interface Lane {
  readonly client: pg.Client;
  awaited: number;
  corked: boolean;
}

/**
 * PostgreSQL connections that lookups outside a transaction share (statements.ts
 * `defineLookup`: a user, a group, a token by its key; and, once prepared, a list's first page
 * of one equality on a key, `Shaped.lookup`: `userName eq`). Each runs in node-postgres's pipeline
 * mode: a lookup is written to the least busy connection at once, without waiting for the
 * answers before it, and the socket stays corked until the event loop's turn ends. So the
 * lookups of all the requests one turn handles leave in one write and their answers come back
 * together, where each would otherwise take a pooled connection (acquire, write, read, release)
 * of its own. Only lookups share: a read by key is quick and never waits on a lock, so nothing
 * slow holds up the others queued behind it on the connection; every other statement uses the
 * pool. A connection that fails or ends is dropped, and the next lookup opens another.
 */
export class LookupConnections {
  readonly #config: pg.ClientConfig;
  readonly #size: number;
  readonly #lanes: Lane[] = [];
  #closed = false;

  constructor(config: pg.ClientConfig, size = LOOKUP_CONNECTIONS) {
    this.#config = config;
    this.#size = size;
  }

  query(name: string, text: string, values: unknown[]): Promise<pg.QueryResult<Record<string, unknown>>> {
    if (this.#closed) return Promise.reject(new Error('the storage is closed'));
    const lane = this.#lane();
    lane.awaited++;
    this.#cork(lane);
    const settled = () => {
      lane.awaited--;
    };
    const answer = lane.client.query<Record<string, unknown>>({ name, text, values });
    answer.then(settled, settled);
    return answer;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const lanes = this.#lanes.splice(0);
    await Promise.all(lanes.map((lane) => lane.client.end().catch(() => {})));
  }

  /** An idle connection, else a new one while fewer than the size are open, else the least busy. */
  #lane(): Lane {
    let best: Lane | undefined;
    for (const lane of this.#lanes) if (best === undefined || lane.awaited < best.awaited) best = lane;
    if (best !== undefined && (best.awaited === 0 || this.#lanes.length >= this.#size)) return best;
    const client = new pg.Client({ ...this.#config, pipeline: true });
    const lane: Lane = { client, awaited: 0, corked: false };
    this.#lanes.push(lane);
    const drop = () => {
      const at = this.#lanes.indexOf(lane);
      if (at >= 0) this.#lanes.splice(at, 1);
      client.end().catch(() => {});
    };
    client.on('error', drop);
    client.on('end', drop);
    // Lookups handed over before the connection is up are sent once it is (or fail with it).
    client.connect().catch(drop);
    return lane;
  }

  /** Holds the connection's writes to the end of this turn of the event loop: one write for all of them. */
  #cork(lane: Lane): void {
    if (lane.corked) return;
    const socket = socketOf(lane.client);
    if (!socket) return;
    lane.corked = true;
    socket.cork();
    setImmediate(() => {
      lane.corked = false;
      socket.uncork();
    });
  }
}

/** How a template runs outside a transaction (pg-driver.ts `PgDriver.run`). */
export interface TemplateRunner {
  run(template: Template, values: unknown[]): Promise<pg.QueryResult<Record<string, unknown>>>;
}

/** Outside a transaction straight on the driver's pool (or the lookups' connections); inside one through Kysely, on the transaction's connection. */
export function pgStatementEngine(driver: TemplateRunner): StatementEngine {
  return {
    async rows(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.rows(ex, template, values);
      return (await driver.run(template, values)).rows;
    },
    async row(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.row(ex, template, values);
      return (await driver.run(template, values)).rows[0];
    },
    async changes(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.changes(ex, template, values);
      return (await driver.run(template, values)).rowCount ?? 0;
    },
    async write(ex, template, values) {
      if (ex.isTransaction) return kyselyEngine.write(ex, template, values);
      await driver.run(template, values);
    },
  };
}

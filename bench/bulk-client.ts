/**
 * The Bulk benchmark's load side (bench/bulk.ts): a keep-alive `node:http` client of a few
 * sockets, the way an identity provider holds its connections; a runner of jobs over a few
 * workers, each sending one request at a time; and a tally of the answers and of the Bulk
 * operations that did not get the status expected, keeping the first one to show.
 */
import { Agent, request as httpRequest } from 'node:http';

export interface Answer {
  readonly status: number;
  readonly body: string;
}

/** A keep-alive client of `connections` sockets to one server. */
export class Client {
  readonly #agent: Agent;
  readonly #url: URL;
  readonly #token: string;

  constructor(url: string, token: string, connections: number) {
    this.#url = new URL(url);
    this.#token = token;
    this.#agent = new Agent({ keepAlive: true, maxSockets: connections });
  }

  send(method: string, path: string, body: unknown): Promise<Answer> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolvePromise, reject) => {
      const req = httpRequest(
        {
          agent: this.#agent,
          host: this.#url.hostname,
          port: this.#url.port,
          method,
          path,
          headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/scim+json', 'content-length': payload.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}

/** Runs `jobs` over `parallel` workers, each job after the previous one of its worker. */
export async function runJobs(jobs: readonly (() => Promise<void>)[], parallel: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(parallel, jobs.length) }, worker));
}

/** Counts answers and Bulk operations that did not get the expected status. */
export class Tally {
  errors = 0;
  first: string | undefined;

  single(answer: Answer, expected: number): void {
    if (answer.status !== expected) this.#fail(`status ${answer.status}: ${answer.body.slice(0, 300)}`);
  }

  bulk(answer: Answer, operations: number, expected: number): void {
    if (answer.status !== 200) {
      this.errors += operations - 1;
      this.#fail(`Bulk status ${answer.status}: ${answer.body.slice(0, 300)}`);
      return;
    }
    const results = (JSON.parse(answer.body) as { Operations: { status: string; response?: unknown }[] }).Operations;
    if (results.length !== operations) this.#fail(`Bulk answered ${results.length} of ${operations} operations`);
    for (const r of results) if (Number(r.status) !== expected) this.#fail(`Bulk operation ${r.status}: ${JSON.stringify(r.response).slice(0, 300)}`);
  }

  #fail(message: string): void {
    this.errors++;
    this.first ??= message;
  }
}

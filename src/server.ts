/**
 * Starts a listening server: connect, migrate, lock an SQLite file against a second server,
 * build the app, make the expression indexes those of the stored schema extensions, listen. `stop` drains in-flight requests (Fastify's close) before the database
 * closes. Used by `rollcall serve` and `npm start`.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.ts';
import { BUDGETS } from './budgets.ts';
import { buildExtensionIndexes } from './scim/index-builder.ts';
import { ConfigError } from './config.ts';
import type { Config } from './config.ts';
import { connect, explainDatabaseError } from './storage/connect.ts';
import type { Storage } from './storage/connect.ts';
import { lockSqliteFile } from './storage/lock.ts';
import { migrate } from './storage/migrations/index.ts';

export interface RunningServer {
  readonly app: FastifyInstance;
  readonly storage: Storage;
  readonly url: string;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Make a missing directory of the SQLite file (`--create`; connect.ts). */
  readonly createDirectory?: boolean;
}

export async function startServer(config: Config, onReady?: (storage: Storage) => Promise<void>, options: StartOptions = {}): Promise<RunningServer> {
  // Every statement of the server has a deadline: the largest a team's statement.ms may be.
  const storage = connect(config.databaseUrl, { createDirectory: options.createDirectory === true, statementTimeoutMs: BUDGETS['statement.ms'].max });
  const release = storage.sqlitePath ? lockSqliteFile(storage.sqlitePath) : () => {};
  try {
    await migrate(storage);
    const app = await buildApp({ config, storage });
    // Before the first request: a migration may have retired extensions (019) whose indexes must
    // go before any write evaluates them; usually there is nothing to do. The app's builder takes
    // over from here. A failure is logged, not fatal: one team's stored schema must not keep
    // every team offline.
    await buildExtensionIndexes(storage).catch((error: unknown) => app.log.error({ err: error }, 'the expression indexes of schema extensions were not brought in line with the stored extensions'));
    const address = await app.listen({ host: config.host, port: config.port }).catch(async (error: unknown) => {
      await app.close().catch(() => {});
      throw explainListenError(error, config);
    });
    // Only once the port is ours: a first run that creates credentials and then fails to listen
    // (port taken) would leave them created and never shown.
    if (onReady) {
      try {
        await onReady(storage);
      } catch (error) {
        await app.close();
        throw error;
      }
    }
    let stopping: Promise<void> | undefined;
    return {
      app,
      storage,
      url: address,
      stop: () =>
        (stopping ??= (async () => {
          // Fastify's close waits for in-flight requests; keep-alive connections they leave idle
          // are closed as soon as they are, instead of after the keep-alive timeout.
          const sweep = setInterval(() => app.server.closeIdleConnections(), 25);
          try {
            await app.close();
          } finally {
            clearInterval(sweep);
          }
          await storage.close();
          release();
        })()),
    };
  } catch (error) {
    await storage.close().catch(() => {});
    release();
    throw explainDatabaseError(error, config.databaseUrl, storage.sqlitePath);
  }
}

/** A failure to listen, retold as one line naming the setting that chose the address. */
function explainListenError(error: unknown, config: Config): unknown {
  const code = (error as { code?: unknown } | undefined)?.code;
  const where = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  if (code === 'EADDRINUSE') return new ConfigError('PORT', `${where} is already in use by another process: stop it, or choose another port with PORT or --port`);
  if (code === 'EACCES') return new ConfigError('PORT', `${where}: permission denied (ports below 1024 need privileges): choose another with PORT or --port`);
  if (code === 'EADDRNOTAVAIL') return new ConfigError('HOST', `${config.host} is not an address of this machine: choose another with HOST or --host`);
  return error;
}

/** Stops the server on SIGTERM / SIGINT, after in-flight requests finish. */
export function stopOnSignals(server: RunningServer): void {
  const handler = (signal: NodeJS.Signals) => {
    server.app.log.info({ signal }, 'stopping: draining in-flight requests');
    server.stop().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', handler);
  process.once('SIGINT', handler);
}

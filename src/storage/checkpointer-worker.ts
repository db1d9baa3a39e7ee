/**
 * The body of the WAL checkpointer's worker thread (checkpointer.ts starts and stops it): its
 * own connection to the SQLite file, copying committed WAL frames into the database every
 * interval with a PASSIVE checkpoint, which never waits for, and never blocks, the serving
 * connection's readers and writer. The fsyncs of a checkpoint happen here, off the thread that
 * answers requests. It never takes the write lock (see checkpointer.ts); emptying a WAL that
 * grew large is the serving connection's job. It writes nothing else and reads no table.
 */
import { DatabaseSync } from 'node:sqlite';
import { parentPort, workerData } from 'node:worker_threads';
import type { CheckpointerSettings, CheckpointReport } from './checkpointer.ts';

const settings = workerData as CheckpointerSettings;
const port = parentPort;
if (!port) throw new Error('checkpointer-worker.ts runs as a worker thread');

const db = new DatabaseSync(settings.path);
const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
// A WAL frame is a page and its 24-byte header.
const frameBytes = (db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size + 24;

interface CheckpointRow {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

// Each report tells the main thread that the worker has just finished and sleeps until the next
// interval: the moment for the serving connection to empty a large WAL without meeting it.
const timer = setInterval(() => {
  const row = passive.get() as unknown as CheckpointRow;
  port.postMessage({ busy: row.busy, log: row.log, checkpointed: row.checkpointed, walBytes: row.log * frameBytes } satisfies CheckpointReport);
}, settings.intervalMs);

port.on('message', (message: unknown) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  port.close();
});

/**
 * One server per SQLite file (DESIGN.md section 2), held by the operating system: the server
 * keeps an exclusive SQLite lock (POSIX fcntl on Unix, LockFileEx on Windows) on a small lock
 * database beside the data file, `<db>.lock`, for as long as it runs. The kernel drops that lock
 * when the process ends, however it ends (SIGKILL, OOM, power cut of a container), so a lock can
 * never outlive its holder, and a new process is never refused because of a stale PID (a
 * container restarted on the same volume is PID 1 again). It does not decide
 * anything about PostgreSQL, where many instances share one database.
 */
import { rmSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';

export class LockedError extends Error {}

/** node:sqlite's error codes (sqlite3.h) that matter here. */
const SQLITE_BUSY = 5;
const SQLITE_NOTADB = 26;

const sqliteCode = (error: unknown): number | undefined => (error as { errcode?: number }).errcode;

/**
 * Opens `<db>.lock` and takes SQLite's exclusive lock on it without waiting. `locking_mode =
 * EXCLUSIVE` keeps the lock after the transaction; the transaction is never committed, so the
 * lock file stays an empty database and no journal is written.
 */
function holdLock(lockPath: string): DatabaseSync {
  const db = new DatabaseSync(lockPath, { timeout: 0 });
  try {
    db.exec('PRAGMA locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    // Reading the header proves the file is a database (an older Rollcall wrote a PID here).
    db.prepare('SELECT count(*) AS n FROM sqlite_schema').get();
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Takes the lock for `dbPath`; returns the function that releases it. */
export function lockSqliteFile(dbPath: string): () => void {
  const lockPath = `${dbPath}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const db = holdLock(lockPath);
      return () => {
        // Closing the connection releases the kernel lock; the empty file may stay.
        if (db.isOpen) db.close();
      };
    } catch (error) {
      const code = sqliteCode(error);
      if (code === SQLITE_BUSY) {
        throw new LockedError(`another Rollcall server is already serving ${dbPath}; stop it first, or use PostgreSQL to run several instances`);
      }
      // A PID file left by a Rollcall before the OS-level lock: nobody holds a lock on it.
      if (code === SQLITE_NOTADB && attempt === 0) {
        rmSync(lockPath, { force: true });
        continue;
      }
      throw error;
    }
  }
  throw new LockedError(`could not lock ${dbPath}`);
}

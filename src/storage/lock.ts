/**
 * One server per SQLite file (DESIGN.md section 2): a lock file beside the database names the
 * owning process. A lock left by a process that is gone is taken over.
 */
import { openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs';

export class LockedError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock for `dbPath`; returns the function that releases it. */
export function lockSqliteFile(dbPath: string): () => void {
  const lockPath = `${dbPath}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(lockPath, 'utf8').trim() === String(process.pid)) rmSync(lockPath);
        } catch {
          // Already gone: nothing to release.
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && alive(pid)) {
        throw new LockedError(`another Rollcall server (pid ${pid}) is already serving ${dbPath}; stop it first, or use PostgreSQL to run several instances`);
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new LockedError(`could not lock ${dbPath}`);
}

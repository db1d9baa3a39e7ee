/**
 * A progress bar on stderr for long loads: redrawn in place on a terminal, a line every tenth
 * otherwise (CI logs). Reports rate and an estimate of the time left. Nothing here is shared:
 * each load makes its own bar.
 */
import type { WriteStream } from 'node:tty';

export interface Progress {
  update(done: number): void;
  done(): void;
}

const WIDTH = 30;

function duration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '?';
  const s = Math.round(seconds);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

/** A bar for `total` units of `label`; `stream` defaults to stderr. */
export function progressBar(label: string, total: number, stream: NodeJS.WriteStream | WriteStream = process.stderr): Progress {
  const started = performance.now();
  const tty = stream.isTTY === true;
  let lastTenth = -1;
  let lastDraw = 0;
  let finished = false;
  let current = 0;

  const line = (): string => {
    const fraction = total === 0 ? 1 : current / total;
    const filled = Math.round(fraction * WIDTH);
    const elapsed = (performance.now() - started) / 1000;
    const rate = elapsed > 0 ? current / elapsed : 0;
    const left = rate > 0 ? (total - current) / rate : Number.POSITIVE_INFINITY;
    return `${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
      `${current.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${Math.round(rate).toLocaleString('en-US')}/s ` +
      `elapsed ${duration(elapsed)} left ${duration(left)}`;
  };

  return {
    update(done: number) {
      current = done;
      if (tty) {
        const now = performance.now();
        if (now - lastDraw < 100 && done < total) return;
        lastDraw = now;
        stream.write(`\r${line()}`);
        return;
      }
      const tenth = Math.floor((total === 0 ? 1 : done / total) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        stream.write(`${line()}\n`);
      }
    },
    done() {
      if (finished) return;
      finished = true;
      current = total;
      stream.write(tty ? `\r${line()}\n` : lastTenth < 10 ? `${line()}\n` : '');
    },
  };
}

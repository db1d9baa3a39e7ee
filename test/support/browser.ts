/**
 * What the browser tests share: Debian's headless Chromium through playwright-core (never a
 * browser download), axe-core run inside a page, the page-level checks of issue 30 item 8 (no
 * sideways scrolling, no failed request, no console error such as a CSP refusal), and where
 * screenshots go: docs/console/ when UPDATE_SCREENSHOTS=1, otherwise a temporary directory the
 * test removes, so that `npm test` leaves the tree as it found it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** Why a browser suite is skipped, or false; with REQUIRE_BROWSER=1 a missing browser is an error instead. */
export const browserMissing: string | false = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install chromium)`;
if (browserMissing && process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is not installed`);

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  /** The first few offending elements' selectors, to find them. */
  readonly targets: string[];
}

/** axe-core's violations on the page as it is now (evaluated over the DevTools protocol, which the page's CSP does not govern). */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    type Result = { violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[] };
    const axe = (globalThis as unknown as { axe: { run(options: unknown): Promise<Result> } }).axe;
    const result = await axe.run({ resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.slice(0, 3).map((n) => n.target.map(String).join(' ')) }));
  });
}

/** The violations as one line each, for an assertion's message. */
export const describeViolations = (violations: readonly AxeViolation[]): string[] => violations.map((v) => `${v.id} (${v.impact ?? 'no impact'}): ${v.targets.join(', ')}`);

export interface Overflow {
  readonly scrollWidth: number;
  readonly viewport: number;
  /** Elements that reach past the right edge of the viewport (tag, classes, width), the first few. */
  readonly wide: string[];
  /** Table wrappers that scroll sideways inside themselves. */
  readonly scrollingTables: string[];
  /** Tables that do not become stacked rows on a narrow screen (not rendered by table.ts dataTable). */
  readonly unstackedTables: number;
}

/** How far the page reaches past the viewport's width, and what does it. */
export async function overflowOf(page: Page): Promise<Overflow> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number }; querySelectorAll(s: string): ArrayLike<{ tagName: string; className: unknown; scrollWidth: number; clientWidth: number; id: string; getBoundingClientRect(): { right: number; width: number } }> } }).document;
    const viewport = (globalThis as unknown as { innerWidth: number }).innerWidth;
    const describe = (el: { tagName: string; className: unknown; id: string }) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}${typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : ''}`;
    const wide: string[] = [];
    for (const el of Array.from(doc.querySelectorAll('body *'))) {
      const box = el.getBoundingClientRect();
      if (box.right > viewport + 1 && wide.length < 8) wide.push(`${describe(el)} (${Math.round(box.width)} px, right edge ${Math.round(box.right)})`);
    }
    const scrollingTables = Array.from(doc.querySelectorAll('.table-wrap'))
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => {
        // What reaches past the wrapper's right edge, the first few, to find the cause.
        const edge = el.getBoundingClientRect().right;
        const inner = Array.from((el as unknown as { querySelectorAll(s: string): ArrayLike<typeof el> }).querySelectorAll('*'))
          .filter((c) => c.getBoundingClientRect().right > edge + 1)
          .slice(-3)
          .map((c) => `${describe(c)} ${Math.round(c.getBoundingClientRect().width)} px`);
        return `${describe(el)} (${el.scrollWidth} > ${el.clientWidth}: ${inner.join(', ')})`;
      });
    const unstackedTables = Array.from(doc.querySelectorAll('table')).filter((el) => !(typeof el.className === 'string' && el.className.split(/\s+/).includes('stack'))).length;
    return { scrollWidth: doc.documentElement.scrollWidth, viewport, wide, scrollingTables, unstackedTables };
  });
}

/** Where a test's screenshots go, and how it cleans up. */
export function screenshotPlace(): { dir: string; saved: boolean; done(): void } {
  const saved = process.env.UPDATE_SCREENSHOTS === '1';
  const dir = saved ? join(import.meta.dirname, '../../docs/console') : mkdtempSync(join(tmpdir(), 'rollcall-screenshots-'));
  return { dir, saved, done: () => (saved ? undefined : rmSync(dir, { recursive: true, force: true })) };
}

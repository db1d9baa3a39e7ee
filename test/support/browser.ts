/**
 * What the browser tests share: Debian's headless Chromium through playwright-core (never a
 * browser download), axe-core run inside a page, the page-level checks of issue 30 item 8 (no
 * sideways scrolling, no failed request, no console error such as a CSP refusal), and where
 * screenshots go: docs/console/ when UPDATE_SCREENSHOTS=1, otherwise a temporary directory the
 * test removes, so that `npm test` leaves the tree as it found it. Also the few steps every
 * browser suite takes the same way: a free port for the app (its public base URL must be the
 * address the browser uses), Chromium launched with the flags above, and the console's sign-in.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
/** Why a browser suite is skipped, or false; with REQUIRE_BROWSER=1 a missing browser is an error instead. */
export const browserMissing: string | false = existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (apt-get install chromium)`;
if (browserMissing && process.env.REQUIRE_BROWSER === '1') throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is not installed`);

/** Debian's Chromium, headless, with the flags above. */
export const launchChromium = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS });

/** A port free on 127.0.0.1 now, so that the app can be told its public base URL before it listens. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
  const port = (probe.address() as AddressInfo).port;
  await new Promise((r) => probe.close(r));
  return port;
}

/** Signs in to the console at `rollcall` with a password, and waits for the overview. */
export async function signInToConsole(page: Page, rollcall: string, userName: string, password: string): Promise<void> {
  await page.goto(`${rollcall}/console/sign-in`);
  await page.getByLabel('User name').fill(userName);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${rollcall}/console`);
}

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

/** The serious and critical violations only, one line each: what a page that must pass "no serious or critical violation" shows. */
export const seriousViolations = async (page: Page): Promise<string[]> =>
  describeViolations((await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical'));

/** How many pixels the page scrolls sideways: its root's content width past its client width (0 or less when it fits). */
export const sidewaysScroll = (page: Page): Promise<number> =>
  page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });

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

/**
 * Takes a screenshot into docs/console/ when UPDATE_SCREENSHOTS=1, and nothing otherwise: the
 * pictures are for the docs, so a run that does not keep them need not take them.
 */
export async function screenshot(page: Page, file: string, options?: { fullPage?: boolean }): Promise<void> {
  if (process.env.UPDATE_SCREENSHOTS === '1') await page.screenshot({ path: join(import.meta.dirname, '../../docs/console', file), ...options });
}

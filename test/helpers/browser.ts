// Headless Debian Chromium for tests, driven by playwright-core (no browser download: the
// system's /usr/bin/chromium, installed by .ci/run). Every launch gets a fresh temporary profile
// that is removed on close (and on process exit).
//
//   await withPage(async (page) => {
//     await page.goto(`http://127.0.0.1:${port}/rigs`);
//     t.equal(await page.locator('td').first().textContent(), 'rig1');
//     await screenshot(page, 'rigs-page');            // -> <repo>/test-output/rigs-page.png
//   });
//
// Options: `netns` runs the browser inside a network namespace from test/helpers/netns.ts (so the
// page is fetched from a rig's VPN address); `hostMap` resolves names (e.g. vpn.rigs.internal) to
// local addresses. Other names fail to resolve (IP literals of loopback and private ranges work).
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Override with RIGD_TEST_CHROMIUM for a Chromium elsewhere. */
export const CHROMIUM_PATH = process.env.RIGD_TEST_CHROMIUM || '/usr/bin/chromium';

/** Flags every launch gets (the profile directory is added per launch by playwright). */
export const CHROMIUM_ARGS: readonly string[] = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // Debian's launcher only adds this when /dev/shm looks small, and its check breaks when
  // findmnt prints more than one line; containers often have a 64 MB /dev/shm.
  '--disable-dev-shm-usage',
  // Never use a proxy from the environment: tests talk to this machine only.
  '--no-proxy-server',
];

export interface BrowserOptions {
  /** Run Chromium inside this network namespace (Host.ns from createHosts). */
  netns?: string;
  /** Host names the browser may resolve, to IPv4 addresses: { 'vpn.rigs.internal': '10.144.7.1' }. */
  hostMap?: Record<string, string>;
  viewport?: { width: number; height: number };
  /** Default timeout for page actions, ms (default 60000: a wait costs nothing when the page is ready, and a busy machine can take long). */
  timeoutMs?: number;
}

/** The name rigd's pages answer on the VPN (vpn.host's default). */
export const VPN_HOST = 'vpn.rigs.internal';

/**
 * Chromium in a viewer's network namespace, resolving VPN_HOST to rigd's address there (`gw`). In
 * the root namespace, every namespace another test file adds or removes is a network change to
 * Chromium, which then cancels the page's loads (ERR_NETWORK_CHANGED).
 */
export function inNamespace(ns: string, gw: string, viewport?: { width: number; height: number }): BrowserOptions {
  return { netns: ns, hostMap: { [VPN_HOST]: gw }, ...(viewport ? { viewport } : {}) };
}

/** The origin of a rigd on `port` as a browser from inNamespace asks for it. */
export const vpnOrigin = (port: number | string) => `http://${VPN_HOST}:${port}`;

/**
 * Waits (up to 60 s) until no address in the namespace is still tentative: a fresh veth's IPv6
 * link-local address finishes duplicate detection a second or two after the link comes up, and
 * Chromium takes that as a network change that cancels the page's loads (ERR_NETWORK_CHANGED).
 */
async function settledAddresses(ns: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const tentative = execFileSync('ip', ['-n', ns, 'addr', 'show', 'tentative'], { encoding: 'utf8' }).trim();
    if (tentative === '') return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`browser helper: addresses in namespace ${ns} still tentative after 60 s`);
}

export interface OpenBrowser {
  context: BrowserContext;
  /** The first page of the context, ready to use. */
  page: Page;
  userDataDir: string;
  /** Console errors and uncaught page errors seen on any page, for assertions. */
  pageErrors: string[];
  /** Screenshot of `page` (default: the first page) into test-output/; returns the file path. */
  screenshot(name: string, page?: Page): Promise<string>;
  /** Closes the browser and removes the profile. Idempotent. */
  close(): Promise<void>;
}

const tempDirs = new Set<string>();
let exitHookInstalled = false;

function removeTempDirsSync(): void {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  tempDirs.clear();
}

/** <repo>/test-output, created if absent (the folder is gitignored). */
export function testOutputDir(): string {
  const dir = path.join(REPO_ROOT, 'test-output');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes a full-page PNG of `page` to test-output/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  const base = name.replace(/\.png$/i, '').replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '') || 'screenshot';
  const file = path.join(testOutputDir(), `${base}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

function resolverRules(hostMap: Record<string, string> = {}): string {
  const rules = Object.entries(hostMap).map(([name, addr]) => {
    if (!/^[A-Za-z0-9.-]+$/.test(name) || !/^[\d.]+$/.test(addr)) throw new Error(`browser helper: bad hostMap entry ${name} -> ${addr}`);
    return `MAP ${name} ${addr}`;
  });
  // MAP * also catches IP literals, so literals of loopback and private ranges are excluded
  // (a pattern cannot say "digits only": a name such as 10.x.example is left to the system resolver).
  rules.push('MAP * ~NOTFOUND', 'EXCLUDE localhost', 'EXCLUDE 127.*', 'EXCLUDE 10.*', 'EXCLUDE 172.*', 'EXCLUDE 192.168.*', 'EXCLUDE [*]');
  return `--host-resolver-rules=${rules.join(', ')}`;
}

export async function openBrowser(opts: BrowserOptions = {}): Promise<OpenBrowser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`browser helper: Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium; .ci/run installs it)`);
  }
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', removeTempDirsSync);
  }
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'rigd-chromium-'));
  tempDirs.add(userDataDir);

  let executablePath = CHROMIUM_PATH;
  if (opts.netns) {
    await settledAddresses(opts.netns);
    if (!/^[A-Za-z0-9_.-]+$/.test(opts.netns)) throw new Error(`browser helper: bad namespace name ${opts.netns}`);
    // playwright talks to Chromium over a pipe, so only Chromium's own network moves into the namespace.
    const wrapDir = mkdtempSync(path.join(tmpdir(), 'rigd-chromium-wrap-'));
    tempDirs.add(wrapDir);
    executablePath = path.join(wrapDir, 'chromium-in-netns');
    writeFileSync(executablePath, `#!/bin/sh\nexec ip netns exec ${opts.netns} ${CHROMIUM_PATH} "$@"\n`);
    chmodSync(executablePath, 0o755);
  }

  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: [...CHROMIUM_ARGS, resolverRules(opts.hostMap)],
      viewport: opts.viewport ?? { width: 1280, height: 800 },
      timeout: 60_000,
    });
  } catch (err) {
    rmSync(userDataDir, { recursive: true, force: true });
    tempDirs.delete(userDataDir);
    throw new Error(`browser helper: Chromium did not start (${CHROMIUM_PATH}): ${(err as Error).message}`);
  }
  context.setDefaultTimeout(opts.timeoutMs ?? 60_000);
  const pageErrors: string[] = [];
  const watch = (p: Page) => {
    p.on('pageerror', (e) => pageErrors.push(`pageerror: ${e.message}`));
    p.on('console', (m) => {
      if (m.type() === 'error') pageErrors.push(`console: ${m.text()}`);
    });
  };
  context.pages().forEach(watch);
  context.on('page', watch);
  const page = context.pages()[0] ?? (await context.newPage());

  let closed = false;
  return {
    context,
    page,
    userDataDir,
    pageErrors,
    screenshot: (name, p = page) => screenshot(p, name),
    async close() {
      if (closed) return;
      closed = true;
      try {
        await context.close();
      } finally {
        for (const d of [userDataDir, path.dirname(executablePath)]) {
          if (tempDirs.has(d)) {
            rmSync(d, { recursive: true, force: true });
            tempDirs.delete(d);
          }
        }
      }
    },
  };
}

/** Opens a browser, runs fn with its page, and always closes it. */
export async function withPage<T>(fn: (page: Page, browser: OpenBrowser) => Promise<T>, opts: BrowserOptions = {}): Promise<T> {
  const b = await openBrowser(opts);
  try {
    return await fn(b.page, b);
  } finally {
    await b.close();
  }
}

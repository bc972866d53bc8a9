// Self-test of test/helpers/browser.ts: headless Debian Chromium opens a local page, reads a
// table, follows a link, writes a PNG screenshot; it can also browse from a network namespace.
import test from 'tape';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { openBrowser, screenshot, testOutputDir, withPage } from '../helpers/browser.ts';
import { createHosts } from '../helpers/netns.ts';

const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function serve(host: string): Promise<{ port: number; seen: string[]; close: () => Promise<void> }> {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.host} ${req.socket.remoteAddress}`);
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (req.url === '/next') {
      res.end('<!doctype html><title>Next</title><h1 id="h">second page</h1>');
      return;
    }
    res.end(`<!doctype html><title>Rigs</title>
<table id="rigs"><thead><tr><th>ID</th><th>LAN IP</th></tr></thead>
<tbody><tr><td><b>rig2</b></td><td><a href="http://192.168.1.20">192.168.1.20</a></td></tr>
<tr><td><b>rig10</b></td><td>&lt;script&gt;x&lt;/script&gt;</td></tr></tbody></table>
<p>peer <span id="peer">${req.socket.remoteAddress}</span></p>
<a id="next" href="/next">next</a>`);
  });
  await new Promise<void>((r) => server.listen({ host, port: 0 }, () => r()));
  return { port: (server.address() as AddressInfo).port, seen, close: () => new Promise((r) => server.close(() => r())) };
}

test('withPage: read a table cell, click a link, screenshot', async (t) => {
  const s = await serve('127.0.0.1');
  let userDataDir = '';
  try {
    await withPage(async (page, b) => {
      userDataDir = b.userDataDir;
      t.ok(existsSync(userDataDir), 'fresh profile directory exists while open');
      const res = await page.goto(`http://127.0.0.1:${s.port}/`);
      t.equal(res?.status(), 200, 'page loaded');
      t.equal(await page.title(), 'Rigs', 'title');
      t.equal(await page.locator('#rigs tbody tr:nth-child(1) td:nth-child(1)').textContent(), 'rig2', 'first cell');
      t.equal(await page.locator('#rigs tbody tr:nth-child(2) td:nth-child(2)').textContent(), '<script>x</script>', 'escaped markup reads back as text');
      t.equal(await page.locator('#rigs tbody a').getAttribute('href'), 'http://192.168.1.20', 'link href');
      t.equal(await page.locator('#peer').textContent(), '127.0.0.1', 'served over loopback');
      const file = await b.screenshot('support-browser-first');
      t.equal(file, `${testOutputDir()}/support-browser-first.png`, 'screenshot in test-output/');
      await page.click('#next');
      await page.waitForURL(`http://127.0.0.1:${s.port}/next`);
      t.equal(await page.locator('#h').textContent(), 'second page', 'link followed');
      rmSync(`${testOutputDir()}/support-browser-next.png`, { force: true });
      const file2 = await screenshot(page, 'support browser/next');
      t.equal(file2, `${testOutputDir()}/support-browser-next.png`, 'name sanitised');
      const png = readFileSync(file2);
      t.ok(png.length > 1000 && png.subarray(0, 8).equals(PNG_MAGIC), `screenshot is a PNG (${png.length} bytes)`);
      t.deepEqual(b.pageErrors, [], 'no page errors');
    });
    t.notOk(existsSync(userDataDir), 'profile removed after close');
    t.ok(s.seen.some((l) => l.startsWith('/next ')), 'server saw the click');
  } finally {
    await s.close();
  }
});

test('names outside hostMap never resolve; hostMap names do', async (t) => {
  const s = await serve('127.0.0.1');
  const b = await openBrowser({ hostMap: { 'vpn.rigs.internal': '127.0.0.1' } });
  try {
    const res = await b.page.goto(`http://vpn.rigs.internal:${s.port}/`);
    t.equal(res?.status(), 200, 'mapped name reaches the local server');
    t.ok(s.seen.some((l) => l.includes(`vpn.rigs.internal:${s.port}`)), 'Host header is the mapped name');
    let failed = '';
    try {
      await b.page.goto('http://example.invalid/', { timeout: 60_000 });
    } catch (err) {
      failed = (err as Error).message;
    }
    t.match(failed, /ERR_NAME_NOT_RESOLVED/, 'unmapped name does not resolve');
  } finally {
    await b.close();
    await b.close();
    await s.close();
  }
  t.pass('close is idempotent');
});

test('netns option: the browser fetches from a client address', async (t) => {
  const net = await createHosts([{ name: 'viewer', addr: '10.144.253.2', gw: '10.144.253.1' }]);
  const s = await serve('::');
  try {
    await withPage(
      async (page) => {
        const res = await page.goto(`http://vpn.rigs.internal:${s.port}/`);
        t.equal(res?.status(), 200, 'page loaded through the namespace');
        t.equal(await page.locator('#peer').textContent(), '::ffff:10.144.253.2', 'server saw the namespace address');
      },
      { netns: net.hosts.viewer!.ns, hostMap: { 'vpn.rigs.internal': '10.144.253.1' } },
    );
  } finally {
    await s.close();
    await net.destroy();
  }
});

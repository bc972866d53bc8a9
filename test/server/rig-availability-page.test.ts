// The rig page's availability section and GET /api/v1/rigs's online_since / offline_since, over
// real HTTP from loopback, on reports written at chosen times through the app's RigService.
import test from 'tape';
import { RigService } from '../../src/services/rigs/service.ts';
import { http } from '../helpers/http.ts';
import { startServer, userWithToken } from '../helpers/server.ts';

const H = 3600_000;

test('rig page lists the offline periods and online shares; the API listing carries online_since / offline_since', async (t) => {
  // The alerts sweep learns a rig's rhythm (every alerts.check_interval_s, 5 s by default); rig5's
  // reports every 30 min would then judge it by that rhythm, whenever a sweep came between the
  // reports and the pages (on a busy machine it does). No sweep after the start here: rigs are
  // judged by the fixed thresholds the page's words are checked against.
  const s = await startServer({ alerts: { check_interval_s: 3600 } });
  try {
    let at = Date.now();
    const rigs = new RigService(s.app.db, s.app.config, { now: () => new Date(at) });
    const report = (id: string, agoMs: number) => {
      at = Date.now() - agoMs;
      return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '', software_version: '1.0', git_branch: 'main', gpsd_latitude: '', gpsd_longitude: '' }, '10.144.220.5');
    };
    // rig5: every 30 min for 30 h, with a 4 h hole that ended 6 h ago; silent for the last 2 h.
    for (let ago = 30 * H; ago >= 2 * H; ago -= H / 2) if (!(ago < 10 * H && ago > 6 * H)) await report('rig5', ago);

    const page = await http(`${s.url}/rigs/rig5`, { headers: { host: '127.0.0.1' } });
    t.equal(page.status, 200, 'page 200 from loopback');
    t.match(page.text, /<h2>Availability<\/h2>/, 'an availability section');
    const table = page.text.slice(page.text.indexOf('class="detail offline-periods"'));
    const rows = table.slice(0, table.indexOf('</table>')).match(/<tr><td>.*?<\/tr>/g) ?? [];
    t.equal(rows.length, 2, 'two offline periods');
    t.match(rows[0] ?? '', /<td>now<\/td><td>2 h<\/td>/, 'newest first: offline since 2 h ago, until now');
    t.match(rows[1] ?? '', /<td>4 h<\/td>/, 'then the 4 h hole');
    // 24 h: offline 4 h + 2 h of 24 h = 75%. 7 days: clipped to the 30 h since the first report: 24 of 30 = 80%.
    t.match(page.text, /Online, last 24 h<\/dt><dd class="online-share">75%<\/dd>/, '24 h share');
    t.match(page.text, /Online, last 7 days<\/dt><dd class="online-share">80% of the last 1 d 6 h <span class="history-start">\(no earlier report kept\)/, '7-day share, clipped to the first report, and says so');
    t.match(page.text, /<p class="offline-note">Offline: no report for more than 1 h\.<\/p>/, 'rig5 is offline: the page says what offline means');
    // rig6 reports right before its page is asked for: its "1 min" is worded down to the minute.
    await report('rig6', 60_000);
    const online = await http(`${s.url}/rigs/rig6`, { headers: { host: '127.0.0.1' } });
    t.equal(online.status, 200, 'rig6 page 200');
    t.notOk(online.text.includes('Offline: no report'), 'rig6 is online: no offline note above its availability');
    t.match(online.text, /Online, last 24 h<\/dt><dd class="online-share">100% of the last 1 min <span class="history-start">/, 'rig6: "100% of the last 1 min"');

    const { token } = await userWithToken(s, 'ops');
    // The API is served on the rig VPN only: injected as if from a VPN address.
    const list = await s.server.inject({ url: '/api/v1/rigs', headers: { host: 'vpn.rigs.internal', authorization: `Bearer ${token}` }, remoteAddress: '10.144.220.2' });
    t.equal(list.statusCode, 200, `API listing 200 ${list.payload.slice(0, 200)}`);
    const byId = Object.fromEntries(JSON.parse(list.payload).data.rigs.map((r: { id: string }) => [r.id, r]));
    t.equal(byId.rig5.online_since, null, 'rig5 offline: online_since null');
    t.equal(new Date(byId.rig5.offline_since).getTime(), new Date(byId.rig5.last_seen_at).getTime(), 'rig5: offline since its last report');
    t.equal(new Date(byId.rig6.online_since).getTime(), new Date(byId.rig6.last_seen_at).getTime(), 'rig6: online since its only report');
    t.equal(byId.rig6.offline_since, null, 'rig6: offline_since null');
  } finally {
    await s.close();
  }
});

// The Authorization header given more than once on the webhook (and every route that takes a
// token): 401 invalid_token saying so, whichever of the values is right. Node keeps only the first
// of repeated Authorization headers, so "first right, second wrong" passed and "first wrong, second
// right" did not: which one was meant cannot be told, as with the token cookie given twice.
import { request } from 'node:http';
import test from 'tape';
import { minioEvent, webhookWorld, WEBHOOK_TOKEN } from '../helpers/webhook.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** POST with the header lines given (an array value is sent as that many lines). */
function post(url: string, headers: Record<string, string | string[]>, body: unknown): Promise<{ status: number; json: { error?: { code: string; message: string }; data?: unknown } }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(data) }));
    });
    req.on('error', reject);
    req.end(text);
  });
}

test('the Authorization header twice on the webhook: 401 invalid_token saying so, nothing queued', async (t) => {
  const w = await webhookWorld(tmpDir());
  try {
    const url = `${w.s.url}/api/v1/webhooks/capture_uploaded`;
    const event = minioEvent('rig1/a.sqlite', 'e', 1);
    const cases: [string, string[]][] = [
      ['right, then wrong', [`Bearer ${WEBHOOK_TOKEN}`, 'Bearer wrong']],
      ['wrong, then right', ['Bearer wrong', `Bearer ${WEBHOOK_TOKEN}`]],
      ['right twice', [`Bearer ${WEBHOOK_TOKEN}`, `Bearer ${WEBHOOK_TOKEN}`]],
      ['a user token and the webhook token', [w.ana.token, `Bearer ${WEBHOOK_TOKEN}`]],
    ];
    for (const [name, authorization] of cases) {
      const res = await post(url, { authorization }, event);
      t.deepEqual([res.status, res.json.error?.code], [401, 'invalid_token'], `${name}: 401 invalid_token`);
      t.match(res.json.error?.message ?? '', /Authorization header is given more than once/, `${name}: says so`);
    }
    t.equal(await w.s.app.db.models.Capture.count(), 0, 'nothing queued');
    const once = await post(url, { authorization: `Bearer ${WEBHOOK_TOKEN}` }, event);
    t.equal(once.status, 200, 'the header once: 200');
  } finally {
    await w.s.close();
  }
});

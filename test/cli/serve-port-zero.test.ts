// `rigd serve --port 0` (the kernel picks the port) with the embedded store and no storage.public_url:
// the signed upload URLs name the port rigd listens on, and a rig's PUT to one is stored. Loopback
// counts as the VPN here (vpn.cidr 127.0.0.0/8, Host 127.0.0.1), so no network namespace is needed.
import test from 'tape';
import { http } from '../helpers/http.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { tmpDir } from '../helpers/tmp.ts';

test('serve --port 0: signed upload URLs name the port rigd listens on, and a PUT to one is stored', async (t) => {
  const serve = await serveProcess({ RIGD_DATA_DIR: tmpDir(), RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_VPN_HOST: '127.0.0.1' });
  try {
    const port = new URL(serve.url).port;
    const res = await http(`${serve.url}/api/v1/rigs/upload?key=rig7/cap.sqlite&size=11`, { headers: { host: '127.0.0.1' } });
    t.equal(res.status, 200, `reserve: 200 ${res.text.slice(0, 120)}`);
    const url = new URL(res.json().url);
    t.equal(url.port, port, `the URL names port ${port}, where rigd listens (${url.origin})`);
    const put = await http(url.href, { method: 'PUT', body: 'hello rigs!' });
    t.equal(put.status, 200, `the rig's PUT is stored: ${put.text.slice(0, 200)}`);
  } finally {
    await serve.stop();
  }
});

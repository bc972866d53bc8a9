import net from 'node:net';

/**
 * A port free right now on `host` (the kernel's pick for port 0, then released), for a process that
 * must be told its port before it starts (a signed URL, a config file naming it).
 */
export function freePort(host = '0.0.0.0'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

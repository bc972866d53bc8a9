// Real receivers for notification tests: an HTTP sink (a webhook receiver that can go down and
// come back on the same address) and an SMTP sink (smtp-server), both recording what they got.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  status: number;
}

export interface HttpSink {
  host: string;
  port: number;
  url(path: string): string;
  received: Received[];
  /** The status answered for a path (default 200). */
  statusFor: (path: string) => number;
  /** Delay before answering, in ms (a slow receiver). */
  delayMs: number;
  /** Stops listening and drops open connections: senders get "connection refused". */
  down(): Promise<void>;
  /** Listens again on the same address and port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/** A random loopback address (127.x.y.z): a port closed while down is not taken by anyone else's test. */
function loopbackHost(): string {
  const b = () => 1 + Math.floor(Math.random() * 250);
  return `127.${b()}.${b()}.${b()}`;
}

export async function startHttpSink(): Promise<HttpSink> {
  const host = loopbackHost();
  let port = 0;
  const sink: HttpSink = {
    host,
    port: 0,
    url: (p) => `http://${host}:${port}${p}`,
    received: [],
    statusFor: () => 200,
    delayMs: 0,
    down: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
    up: () => new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    }),
    close: () => sink.down(),
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const status = sink.statusFor(path);
      const answer = () => {
        sink.received.push({ path, headers: req.headers, body: Buffer.concat(chunks), status });
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok\nsecond line' : 'gone for good\n');
      };
      if (sink.delayMs > 0) setTimeout(answer, sink.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  port = (server.address() as AddressInfo).port;
  sink.port = port;
  return sink;
}

/** Whether X-Rigd-Signature is the HMAC-SHA256 of the exact body bytes with secret. */
export function signatureValid(r: Received, secret: string): boolean {
  const given = String(r.headers['x-rigd-signature'] ?? '');
  const want = `sha256=${createHmac('sha256', secret).update(r.body).digest('hex')}`;
  return given.length === want.length && timingSafeEqual(Buffer.from(given), Buffer.from(want));
}

export interface Mail {
  from: string;
  to: string[];
  user: string | null;
  password: string | null;
  raw: string;
  header(name: string): string | undefined;
}

export interface SmtpSink {
  port: number;
  mails: Mail[];
  /** SMTP code refused at RCPT TO (e.g. 550), or null to accept. */
  refuseRecipients: number | null;
  close(): Promise<void>;
}

/** An SMTP relay on 127.0.0.1 without TLS, taking any login (and recording it). */
export async function startSmtpSink(): Promise<SmtpSink> {
  const sink: SmtpSink = { port: 0, mails: [], refuseRecipients: null, close: async () => undefined };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onAuth(auth, _session, cb) {
      cb(null, { user: JSON.stringify({ user: auth.username, password: auth.password }) });
    },
    onRcptTo(_address, _session, cb) {
      if (sink.refuseRecipients === null) return cb();
      const err = Object.assign(new Error('mailbox unavailable'), { responseCode: sink.refuseRecipients });
      cb(err);
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const head = raw.split(/\r?\n\r?\n/)[0].replace(/\r?\n[ \t]+/g, ' ');
        const login = session.user ? (JSON.parse(String(session.user)) as { user: string; password: string }) : null;
        sink.mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          user: login?.user ?? null,
          password: login?.password ?? null,
          raw,
          header(name) {
            const m = new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head);
            return m?.[1].trim();
          },
        });
        cb(null);
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  sink.port = (server.server.address() as AddressInfo).port;
  sink.close = () => new Promise((resolve) => server.close(() => resolve()));
  return sink;
}

// The reference of the upload bench's PUT, in a process of its own: a plain node:http server that
// reads a request's body, discards it and answers "ok". argv: host. Prints its port, serves until SIGTERM.
import http from 'node:http';

const sink = http.createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => res.end('ok'));
});
sink.listen(0, process.argv[2] ?? '127.0.0.1', () => process.stdout.write(`${(sink.address() as { port: number }).port}\n`));
process.once('SIGTERM', () => sink.close(() => process.exit(0)));

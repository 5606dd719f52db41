// tests/daemon/a2a-hook.mjs: a loopback webhook receiver for the A2A push
// notification tests. Usage: node a2a-hook.mjs PORTFILE LOGFILE
// Listens on 127.0.0.1 (a free port, written to PORTFILE once listening),
// appends one JSON line per request to LOGFILE ({method, path, headers,
// body}) and answers 200, or 500 when the path holds "fail". Exits on
// SIGTERM, or by itself after 180 s.
import http from 'node:http';
import fs from 'node:fs';

const [portFile, logFile] = process.argv.slice(2);
const server = http.createServer((req, res) => {
  const chunks = [];
  let size = 0;
  req.on('data', c => { size += c.length; if (size <= 1 << 20) chunks.push(c); });
  req.on('end', () => {
    fs.appendFileSync(logFile, JSON.stringify({ method: req.method, path: req.url, headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8') }) + '\n');
    res.writeHead(req.url.includes('fail') ? 500 : 200, { 'Content-Type': 'text/plain' });
    res.end('ok\n');
  });
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
const stop = () => { server.close(); process.exit(0); };
process.on('SIGTERM', stop);
setTimeout(stop, 180000).unref();
setInterval(() => {}, 1000).unref();

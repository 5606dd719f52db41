// tests/daemon/conformance-proxy.mjs: the MCP host's part for the conformance
// suite. The suite (@modelcontextprotocol/conformance) has no way to send a
// credential, and worldd serve answers every unauthenticated /mcp/ request
// 401 (docs/daemon.md), as it must. A host holds the agent's credential and
// sends it with each request; this proxy is that host and nothing more: it
// adds `Authorization: Bearer TOKEN` and forwards every request (method,
// path, every other header including Host and Origin, body) and the answer
// (status, headers, body, streamed as it arrives) unchanged.
//
//   node conformance-proxy.mjs TARGET_FILE TOKEN_FILE PORT_FILE
// TARGET_FILE holds the daemon's URL (read per request: the proxy starts
// before the daemon so that the daemon can be told the proxy's origin);
// the proxy listens on 127.0.0.1:0 and writes its port to PORT_FILE.
// It exits by itself after 10 minutes (a bounded loop for a test server).
import http from 'node:http';
import fs from 'node:fs';

const [targetFile, tokenFile, portFile] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile, 'utf8').trim();
const server = http.createServer((req, res) => {
  let target;
  try {
    target = new URL(fs.readFileSync(targetFile, 'utf8').trim());
  } catch (e) {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`conformance-proxy: no daemon URL in ${targetFile}: ${e.message}\n`);
    return;
  }
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
    { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    });
  upstream.on('error', (e) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`conformance-proxy: ${e.message}\n`);
  });
  res.on('close', () => upstream.destroy());
  req.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => fs.writeFileSync(portFile, String(server.address().port)));
setTimeout(() => process.exit(0), 600_000).unref();

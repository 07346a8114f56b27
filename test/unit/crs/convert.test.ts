// The CRS converter (scripts/crs/convert.ts): exact managed rules emitted for small SecLang
// snippets (written to a temporary CRS-like folder), and the generated
// server/src/managed/generated/owasp-rules.json: sorted, stable, up to date with Debian's
// CRS 3.3.4, and accepted by the checker with the managed-only extensions.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { analyzeCrs } from '../../../scripts/crs/analyze';
import { APPROXIMATIONS, categoryOfTag, convertAnalysis, lit, readDataFiles, renderReport, unconvertedList, type Conversion } from '../../../scripts/crs/convert';
import { mintId } from '../../../server/src/rulesets/managedIds';
import { checkExpression } from '../../../server/src/language/index';

const INIT = String.raw`
SecRule &TX:allowed_methods "@eq 0" \
    "id:901160,phase:1,pass,nolog,ver:'OWASP_CRS/3.3.4',setvar:'tx.allowed_methods=GET HEAD POST OPTIONS'"
`;

const score = (pl: number, sev = 'critical') => `setvar:'tx.anomaly_score_pl${pl}=+%{tx.${sev}_anomaly_score}'`;

const RULES = String.raw`
SecRule REQUEST_COOKIES|!REQUEST_COOKIES:/__utm/|REQUEST_COOKIES_NAMES|ARGS_NAMES|ARGS|XML:/* "@rx (?i)union\s+select" \
    "id:942999,phase:2,block,capture,t:none,t:urlDecodeUni,t:lowercase,msg:'SQL Injection Attack',\
    tag:'application-multi',tag:'language-multi',tag:'platform-multi',tag:'attack-sqli',tag:'paranoia-level/2',\
    tag:'OWASP_CRS',tag:'capec/1000/152/248/66',tag:'PCI/6.5.2',ver:'OWASP_CRS/3.3.4',severity:'CRITICAL',\
    setvar:'tx.sql_injection_score=+%{tx.critical_anomaly_score}',${score(2)}"

SecRule REQUEST_HEADERS:User-Agent "@pmFromFile scanners-user-agents.data" \
    "id:913100,phase:2,block,capture,t:none,t:lowercase,msg:'Found User-Agent associated with security scanner',\
    tag:'attack-reputation-scanner',tag:'paranoia-level/1',severity:'CRITICAL',${score(1)}"

SecRule REQUEST_METHOD "!@within %{tx.allowed_methods}" \
    "id:911100,phase:2,block,msg:'Method is not allowed by policy',tag:'paranoia-level/1',severity:'CRITICAL',${score(1)}"

SecRule REQUEST_HEADERS:Content-Length "!@rx ^\d+$" \
    "id:920160,phase:1,block,t:none,msg:'Content-Length HTTP header is not numeric',tag:'paranoia-level/1',severity:'CRITICAL',${score(1)}"

SecRule &REQUEST_HEADERS:Host "@eq 0" \
    "id:920280,phase:2,pass,t:none,msg:'Request Missing a Host Header',tag:'paranoia-level/1',severity:'WARNING',${score(1, 'warning')}"

SecRule &ARGS "@gt 255" \
    "id:920999,phase:2,block,msg:'Too many arguments',tag:'paranoia-level/3',severity:'NOTICE',${score(3, 'notice')}"

SecRule REQUEST_METHOD "@rx ^(?:GET|HEAD)$" \
    "id:920170,phase:2,block,t:none,msg:'GET or HEAD Request with Body Content',tag:'paranoia-level/1',severity:'CRITICAL',chain"
    SecRule REQUEST_HEADERS:Content-Length "!@rx ^0?$" "t:none,${score(1)}"

SecRule ARGS "@rx \$\(" \
    "id:932998,phase:2,block,t:none,t:lowercase,msg:'RCE',tag:'paranoia-level/1',severity:'ERROR',chain"
    SecRule MATCHED_VARS "@rx \s" "t:none,t:urlDecodeUni,${score(1, 'error')}"

SecRule &TX:MAX_NUM_ARGS "@eq 1" \
    "id:920380,phase:2,block,msg:'Too many arguments in request',tag:'paranoia-level/1',severity:'CRITICAL',chain"
    SecRule &ARGS "@gt %{tx.max_num_args}" "t:none,${score(1)}"

SecRule ARGS|XML:/*|XML://@* "@rx java\.lang" \
    "id:944999,phase:2,block,t:none,msg:'Java',tag:'paranoia-level/1',severity:'CRITICAL',${score(1)}"

SecRule XML://b "@rx x" \
    "id:944998,phase:2,block,t:none,msg:'an XPath other than /* and //@*',tag:'paranoia-level/1',severity:'CRITICAL',${score(1)}"

SecRule REQUEST_HEADERS:Range "@rx (\d+)-(\d+)" \
    "id:920191,phase:2,block,capture,msg:'Range: Invalid Last Byte Value (a rule without a hand rewrite)',tag:'paranoia-level/1',severity:'WARNING',chain"
    SecRule TX:2 "@lt %{tx.1}" "${score(1, 'warning')}"
`;

let dir: string | undefined;
function convertSnippets(): Conversion {
  dir = mkdtempSync(join(tmpdir(), 'crs-convert-'));
  writeFileSync(join(dir, 'REQUEST-901-INITIALIZATION.conf'), INIT);
  writeFileSync(join(dir, 'REQUEST-999-TEST.conf'), RULES);
  writeFileSync(join(dir, 'scanners-user-agents.data'), '# comment\n\nnikto\nsqlmap\n');
  const a = analyzeCrs(dir);
  assert.deepEqual(a.problems, []);
  return convertAnalysis(a);
}
after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('convert: snippets', () => {
  const c = convertSnippets();
  const rule = (id: string) => {
    const r = c.rules.find((x) => x.ref === id);
    assert.ok(r, `rule ${id} converted`);
    return r;
  };

  test('@rx with transformations and a cookie exclusion: the whole rule', () => {
    assert.deepEqual(rule('942999'), {
      id: mintId('owasp:942999'),
      ref: '942999',
      version: '1',
      description: '942999: SQL Injection Attack',
      expression:
        'any(op.rx(t.lowercase(t.urlDecodeUni(concat(crs.values(crs.without_matching(crs.request_cookies, "__utm")), crs.request_cookies_names, crs.args_names, crs.values(crs.args), crs.xml)[*])[*])[*], r"(?i)union\\s+select"))',
      action: 'score',
      action_parameters: { increment: 5 },
      enabled: true,
      categories: ['paranoia-level-2', 'application-multi', 'language-multi', 'platform-multi', 'attack-sqli', 'owasp_crs', 'capec-1000-152-248-66', 'pci-6.5.2'],
      last_updated: '2024-07-15T10:00:00.000000Z',
    });
    assert.match(rule('942999').id, /^[0-9a-f]{32}$/);
  });

  test('@pmFromFile on a selected header', () => {
    const r = rule('913100');
    assert.equal(r.expression, 'any(op.pmFromFile(t.lowercase(crs.request_headers["user-agent"][*])[*], "scanners-user-agents.data"))');
    assert.equal(r.description, '913100: Found User-Agent associated with security scanner');
    assert.deepEqual(r.categories, ['paranoia-level-1', 'attack-reputation-scanner']);
    assert.deepEqual(r.action_parameters, { increment: 5 });
  });

  test('negated operators: a scalar, and per value over a collection; 901 macros resolved', () => {
    assert.equal(rule('911100').expression, 'not op.within(crs.request_method, "GET HEAD POST OPTIONS")');
    assert.equal(rule('920160').expression, 'any(not op.rx(crs.request_headers["content-length"][*], r"^\\d+$"))');
  });

  test('counts', () => {
    assert.equal(rule('920280').expression, 'not has_key(crs.request_headers, "host")');
    assert.deepEqual(rule('920280').action_parameters, { increment: 3 });
    assert.equal(rule('920999').expression, 'op.gt(len(crs.args_names), 255)');
    assert.deepEqual(rule('920999').action_parameters, { increment: 2 });
    assert.deepEqual(rule('920999').categories, ['paranoia-level-3']);
  });

  test('chains: links joined with and; MATCHED_VARS approximated by the first link\'s variables', () => {
    assert.equal(rule('920170').expression, 'op.rx(crs.request_method, "^(?:GET|HEAD)$") and any(not op.rx(crs.request_headers["content-length"][*], "^0?$"))');
    assert.equal(rule('932998').expression, 'any(op.rx(t.lowercase(crs.values(crs.args)[*])[*], r"\\$\\(")) and any(op.rx(t.urlDecodeUni(crs.values(crs.args)[*])[*], r"\\s"))');
    assert.deepEqual(rule('932998').action_parameters, { increment: 4 });
  });

  test('XML:/* is the text content (crs.xml), XML://@* the attribute values (crs.xml_attributes)', () => {
    assert.equal(rule('944999').expression, 'any(op.rx(concat(crs.values(crs.args), crs.xml, crs.xml_attributes)[*], r"java\\.lang"))');
  });

  test('the coverage report lists every ruleset-wide approximation, the score counting first', () => {
    const report = renderReport(analyzeCrs(dir!), c);
    const section = report.slice(report.indexOf('## Approximations'));
    assert.equal(section.split('\n').filter((l) => l.startsWith('- ')).length, APPROXIMATIONS.length);
    assert.match(section, /^## Approximations\n\nRuleset-wide:\n\n- Anomaly scores: a converted rule adds its severity's score once when it matches, .*ModSecurity adds it once per matched variable/);
    assert.match(section, /\n- XML bodies: .*`XML:\/\*` \(`crs\.xml`\) is the root element's text content, `XML:\/\/@\*` \(`crs\.xml_attributes`\) each attribute value/);
  });

  test('rules that cannot be converted are listed with the reason, not dropped', () => {
    assert.deepEqual([...c.leftOut.keys()].sort(), ['920191', '920380', '944998']);
    assert.equal(c.leftOut.get('944998')!.reason, 'variable selector: XML://b (only XML:/* and XML://@*)');
    assert.equal(c.leftOut.get('920380')!.kind, 'disabled-by-defaults');
    assert.match(c.leftOut.get('920380')!.reason, /MAX_NUM_ARGS/);
    assert.equal(c.leftOut.get('920191')!.kind, 'unsupported');
    assert.match(c.leftOut.get('920191')!.reason, /TX:N/);
    assert.equal(c.rules.length + c.leftOut.size, c.detection.length);
    assert.deepEqual(c.rules.map((r) => r.ref), [...c.rules.map((r) => r.ref)].sort());
  });

  test('data files: phrases without comments and blank lines', () => {
    assert.deepEqual(readDataFiles(dir!), { 'scanners-user-agents.data': ['nikto', 'sqlmap'] });
  });

  test('tags and literals', () => {
    assert.equal(categoryOfTag('paranoia-level/4'), 'paranoia-level-4');
    assert.equal(categoryOfTag('OWASP_CRS/WEB_ATTACK/SQL_INJECTION'), 'owasp_crs-web_attack-sql_injection');
    assert.equal(categoryOfTag('language-php'), 'language-php');
    assert.equal(lit('abc'), '"abc"');
    assert.equal(lit('a\\d'), 'r"a\\d"');
    assert.equal(lit('a"b'), 'r#"a"b"#');
    assert.equal(lit('a"#b\\'), 'r##"a"#b\\"##');
  });
});

const GENERATED = join(__dirname, '../../../server/src/managed/generated/owasp-rules.json');
const CRS_DIR = process.env.CRS_RULES_DIR || '/usr/share/modsecurity-crs/rules';

describe('convert: the generated ruleset', () => {
  const rules = JSON.parse(readFileSync(GENERATED, 'utf8')) as Array<{ id: string; ref: string; description: string; expression: string; action: string; categories: string[]; action_parameters: { increment: number } }>;

  test('shape: sorted by CRS id, unique 32-hex ids, score rules with a paranoia level', () => {
    assert.ok(rules.length > 150);
    assert.deepEqual(rules.map((r) => Number(r.ref)), rules.map((r) => Number(r.ref)).sort((a, b) => a - b));
    assert.equal(new Set(rules.map((r) => r.id)).size, rules.length);
    for (const r of rules) {
      assert.match(r.id, /^[0-9a-f]{32}$/);
      assert.equal(r.id, mintId(`owasp:${r.ref}`));
      assert.ok(r.description.startsWith(`${r.ref}: `), r.description);
      assert.equal(r.action, 'score');
      assert.ok([2, 3, 4, 5].includes(r.action_parameters.increment));
      assert.match(r.categories[0], /^paranoia-level-[1-4]$/);
    }
    // Hand rewrites of capture + `@within` chains, from the 901 default lists.
    assert.equal(rules.find((r) => r.ref === '920450')!.expression, 'any(op.rx(t.lowercase(crs.request_headers_names[*])[*], "^(?:accept-charset|content-encoding|proxy|lock-token|content-range|if)$"))');
    assert.match(rules.find((r) => r.ref === '920420')!.expression, /^any\(op\.rx\(t\.lowercase\(crs\.request_headers\["content-type"\]\[\*\]\)\[\*\], r"\^\(\?!\(\?:application\\\/x-www-form-urlencoded\|/);
    const sqli = rules.find((r) => r.ref === '942100')!;
    assert.equal(sqli.description, '942100: SQL Injection Attack Detected via libinjection');
    assert.ok(sqli.categories.includes('attack-sqli'));
  });

  test('up to date: converting Debian\'s CRS 3.3.4 again gives the same file', () => {
    assert.ok(existsSync(CRS_DIR), `${CRS_DIR} is missing: run \`node scripts/crs/ensure-crs.mjs\` (\`npm test\` does), or set CRS_RULES_DIR`);
    const c = convertAnalysis(analyzeCrs(CRS_DIR));
    assert.equal(JSON.stringify(c.rules, null, 1) + '\n', readFileSync(GENERATED, 'utf8'));
    assert.equal(JSON.stringify(unconvertedList(c), null, 1) + '\n', readFileSync(GENERATED.replace('owasp-rules.json', 'owasp-unconverted.json'), 'utf8'));
    // Every op.pmFromFile file has its phrases in the data module's source.
    const data = readDataFiles(CRS_DIR);
    for (const r of c.rules) for (const m of r.expression.matchAll(/"([\w.-]+\.data)"\)/g)) assert.ok(data[m[1]]?.length, `${r.ref}: ${m[1]}`);
  });

  test('every expression passes the checker with allowManaged (only the 4,096-character limit aside)', () => {
    const tooLong: string[] = [];
    for (const r of rules) {
      const d = checkExpression(r.expression, { allowManaged: true, plan: 'enterprise', phase: 'http_request_firewall_managed' }).diagnostics.filter((x) => x.severity === 'error');
      const other = d.filter((x) => x.code !== 'expression-too-long');
      assert.deepEqual(other.map((x) => `${x.code}: ${x.message}`), [], `${r.ref}: ${r.expression.slice(0, 200)}`);
      if (d.length) tooLong.push(r.ref);
    }
    // CRS patterns longer than the user-rule limit on their own (e.g. 932100's ~4 KB regex).
    for (const ref of tooLong) assert.ok(rules.find((r) => r.ref === ref)!.expression.length > 4096);
    assert.ok(tooLong.length <= 10, `too long: ${tooLong.join(' ')}`);
  });
});

// The SecLang parser of the CRS converter (scripts/crs/seclang.ts) on small inline snippets,
// and the analysis (scripts/crs/analyze.ts) of the real CRS 3.3.4 request rules from Debian's
// `modsecurity-crs` package. That package must be installed (CI: `node
// scripts/crs/ensure-crs.mjs` as root); this test installs nothing and fails when it is missing.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  logicalLines,
  parseActions,
  parseMacroText,
  parseOperator,
  parseSecLang,
  parseVariables,
  rulesOf,
  type Rule,
} from '../../../scripts/crs/seclang';
import { analyzeCrs, countAnalysis, regexFeatures, renderCoverage, type Analysis } from '../../../scripts/crs/analyze';

const noErr = (m: string) => assert.fail(`unexpected problem: ${m}`);
function one(text: string): Rule {
  const p = parseSecLang(text, 'snippet.conf');
  assert.deepEqual(p.problems, []);
  const rules = rulesOf(p);
  assert.equal(rules.length, 1);
  return rules[0];
}

describe('seclang: lines and comments', () => {
  test('backslash-newline joins physical lines; line numbers are kept', () => {
    const ll = logicalLines('# c\nSecRule ARGS "@rx a" \\\n    "id:1,\\\n    phase:2"\nSecMarker END\n');
    assert.deepEqual(ll.map((l) => [l.line, l.endLine]), [[1, 1], [2, 4], [5, 5], [6, 6]]);
    assert.equal(ll[1].text, 'SecRule ARGS "@rx a"     "id:1,    phase:2"');
  });

  test('comments (also continued ones) and blank lines are skipped', () => {
    const p = parseSecLang('# one\n  # two \\\n# still two\n\n#SecRule ARGS "@rx x" \\\n#   "id:2,phase:1"\nSecMarker "M"\n', 'f.conf');
    assert.deepEqual(p.problems, []);
    assert.equal(p.counts.comments, 3);
    assert.equal(p.directives.length, 1);
    assert.deepEqual(p.directives[0], { type: 'marker', loc: { file: 'f.conf', line: 7, endLine: 7 }, name: 'M' });
  });

  test('SecComponentSignature, SecAction, other directives', () => {
    const p = parseSecLang('SecComponentSignature "OWASP_CRS/3.3.4"\nSecAction "id:901200,phase:1,pass,nolog,setvar:\'tx.a=1\'"\nSecRuleEngine On\n');
    assert.deepEqual(p.problems, []);
    assert.deepEqual(p.directives.map((d) => d.type), ['componentSignature', 'rule', 'other']);
    const sig = p.directives[0];
    assert.ok(sig.type === 'componentSignature' && sig.value === 'OWASP_CRS/3.3.4');
    const r = p.directives[1] as Rule;
    assert.equal(r.links[0].directive, 'SecAction');
    assert.equal(r.links[0].operator, null);
    assert.deepEqual(r.links[0].variables, []);
    assert.equal(r.id, 901200);
  });
});

describe('seclang: variables', () => {
  test('collections, selectors, exclusions with regex and names, counts, XPath', () => {
    const v = parseVariables('REQUEST_COOKIES|!REQUEST_COOKIES:/__utm/|!ARGS:foo|&REQUEST_HEADERS:Content-Length|REQUEST_HEADERS:User-Agent|XML:/*|xml://@*', noErr);
    assert.deepEqual(
      v.map((x) => [x.name, x.exclude, x.count, x.selector]),
      [
        ['REQUEST_COOKIES', false, false, undefined],
        ['REQUEST_COOKIES', true, false, { kind: 'regex', pattern: '__utm' }],
        ['ARGS', true, false, { kind: 'name', value: 'foo' }],
        ['REQUEST_HEADERS', false, true, { kind: 'name', value: 'Content-Length' }],
        ['REQUEST_HEADERS', false, false, { kind: 'name', value: 'User-Agent' }],
        ['XML', false, false, { kind: 'xpath', value: '/*' }],
        ['XML', false, false, { kind: 'xpath', value: '//@*' }],
      ],
    );
    assert.equal(v[1].raw, '!REQUEST_COOKIES:/__utm/');
  });

  test('a regex selector may hold | and escaped /', () => {
    const v = parseVariables('TX:/^(a|b)\\/c/|ARGS', noErr);
    assert.deepEqual(v[0].selector, { kind: 'regex', pattern: '^(a|b)\\/c' });
    assert.equal(v[1].name, 'ARGS');
  });

  test('bad variables are problems, not exceptions', () => {
    const errs: string[] = [];
    parseVariables('ARGS||!:/x', (m) => errs.push(m));
    assert.ok(errs.length >= 1);
    const p = parseSecLang('SecRule ARGS:/unterminated "@rx x" "id:5,phase:2,pass"', 'bad.conf');
    assert.equal(p.problems.length, 1);
    assert.equal(p.problems[0].file, 'bad.conf');
    assert.equal(p.problems[0].line, 1);
    assert.match(p.problems[0].message, /unterminated regex selector/);
  });
});

describe('seclang: operators', () => {
  test('@name argument, negation, implicit @rx, no argument', () => {
    const a = parseOperator('@pmFromFile scanners-user-agents.data', noErr);
    assert.deepEqual([a.name, a.negated, a.implicit, a.argument], ['pmFromFile', false, false, 'scanners-user-agents.data']);
    const b = parseOperator('!@rx ^(?:GET|HEAD)$', noErr);
    assert.deepEqual([b.name, b.negated, b.argument], ['rx', true, '^(?:GET|HEAD)$']);
    const c = parseOperator('^\\d+$', noErr);
    assert.deepEqual([c.name, c.implicit, c.argument], ['rx', true, '^\\d+$']);
    const d = parseOperator('!^x', noErr);
    assert.deepEqual([d.name, d.negated, d.implicit, d.argument], ['rx', true, true, '^x']);
    const e = parseOperator('@detectSQLi', noErr);
    assert.deepEqual([e.name, e.argument], ['detectSQLi', '']);
    const f = parseOperator('@ge %{tx.inbound_anomaly_score_threshold}', noErr);
    assert.equal(f.macros.hasMacros, true);
    assert.deepEqual(f.macros.parts, [{ kind: 'macro', raw: 'tx.inbound_anomaly_score_threshold', collection: 'TX', key: 'inbound_anomaly_score_threshold' }]);
  });

  test('double-quoted arguments: \\" and \\\\ are unescaped, other backslashes kept (ModSecurity 2 / Apache)', () => {
    const r = one('SecRule ARGS "@rx [\\"\'][\\\\/]\\d" "id:3,phase:2,pass"');
    assert.equal(r.links[0].operator!.argument, '["\'][\\/]\\d');
    assert.equal(r.links[0].args.operator!.raw, '@rx [\\"\'][\\\\/]\\d');
  });
});

describe('seclang: actions', () => {
  test('quoted values may hold commas and colons; \\\' and \\\\ escapes', () => {
    const a = parseActions("id:1,  phase:2,block,msg:'a, b: c',logdata:'it\\'s %{TX.0}',t:none,t:lowercase,tag:'x\\\\y'", noErr);
    assert.deepEqual(
      a.map((x) => [x.name, x.value, x.quoted]),
      [
        ['id', '1', false],
        ['phase', '2', false],
        ['block', undefined, false],
        ['msg', 'a, b: c', true],
        ['logdata', "it's %{TX.0}", true],
        ['t', 'none', false],
        ['t', 'lowercase', false],
        ['tag', 'x\\y', true],
      ],
    );
  });

  test('unquoted ctl values with ; and :', () => {
    const r = one('SecRule REQUEST_FILENAME "@endsWith /wp-login.php" "id:9002100,phase:2,pass,nolog,ctl:ruleRemoveTargetById=930100;ARGS:pwd,ctl:auditLogParts=+E"');
    assert.deepEqual(r.links[0].ctls.map((c) => [c.option, c.value]), [
      ['ruleRemoveTargetById', '930100;ARGS:pwd'],
      ['auditLogParts', '+E'],
    ]);
  });

  test('setvar: =, =+, =-, delete, no value, macros in names and values', () => {
    const r = one(
      "SecAction \"id:7,phase:1,pass,nolog,setvar:'tx.anomaly_score_pl1=+%{tx.critical_anomaly_score}',setvar:tx.x=-1,setvar:'tx.msg=%{rule.msg}',setvar:!ip.reput_block_flag,setvar:tx.flag,setvar:'tx.%{rule.id}-WEB=%{matched_var}'\"",
    );
    const s = r.links[0].setvars;
    assert.deepEqual(s.map((x) => [x.collection, x.key, x.op, x.value.text]), [
      ['tx', 'anomaly_score_pl1', 'add', '%{tx.critical_anomaly_score}'],
      ['tx', 'x', 'subtract', '1'],
      ['tx', 'msg', 'set', '%{rule.msg}'],
      ['ip', 'reput_block_flag', 'delete', ''],
      ['tx', 'flag', 'set', '1'],
      ['tx', '%{rule.id}-WEB', 'set', '%{matched_var}'],
    ]);
    assert.equal(s[0].value.hasMacros, true);
    assert.equal(s[5].keyMacros.hasMacros, true);
  });

  test('metadata: id, phase, severity (names and numbers), tags, msg, ver, disruptive, skipAfter', () => {
    const r = one("SecRule ARGS \"@rx x\" \"id:942100,phase:request,block,severity:2,tag:'a',tag:'paranoia-level/1',msg:'m',ver:'OWASP_CRS/3.3.4'\"");
    assert.deepEqual([r.id, r.phase, r.severity, r.tags, r.msg, r.ver, r.disruptive], [942100, 2, 'CRITICAL', ['a', 'paranoia-level/1'], 'm', 'OWASP_CRS/3.3.4', 'block']);
    const s = one('SecRule TX:EXECUTING_PARANOIA_LEVEL "@lt 2" "id:942013,phase:1,pass,nolog,skipAfter:END-REQUEST-942-APPLICATION-ATTACK-SQLI"');
    assert.equal(s.skipAfter, 'END-REQUEST-942-APPLICATION-ATTACK-SQLI');
  });

  test('transformations: written order and those in effect after t:none', () => {
    const r = one('SecRule ARGS "@rx x" "id:1,phase:2,pass,t:lowercase,t:none,t:urlDecodeUni,t:removeNulls"');
    assert.deepEqual(r.links[0].transformationsWritten, ['lowercase', 'none', 'urlDecodeUni', 'removeNulls']);
    assert.deepEqual(r.links[0].transformations, ['urlDecodeUni', 'removeNulls']);
    assert.equal(r.links[0].resetsTransformations, true);
  });

  test('bad actions are reported with file:line and parsing goes on', () => {
    const p = parseSecLang("SecRule ARGS \"@rx x\" \"id:1,phase:2,msg:'open\"\nSecRule ARGS \"@rx y\" \"id:2,phase:2,bogus,pass\"\nSecMarker OK", 'x.conf');
    assert.deepEqual(p.problems.map((q) => [q.line, q.message.replace(/ .*/, '')]), [
      [1, 'missing'],
      [2, 'unknown'],
    ]);
    assert.equal(p.directives.length, 3);
  });

  test('macro text', () => {
    assert.deepEqual(parseMacroText('Total: %{TX.ANOMALY_SCORE}!').parts, [
      { kind: 'text', value: 'Total: ' },
      { kind: 'macro', raw: 'TX.ANOMALY_SCORE', collection: 'TX', key: 'ANOMALY_SCORE' },
      { kind: 'text', value: '!' },
    ]);
    assert.deepEqual(parseMacroText('%{MATCHED_VAR}').parts, [{ kind: 'macro', raw: 'MATCHED_VAR', collection: 'MATCHED_VAR' }]);
  });
});

describe('seclang: chains', () => {
  const text = [
    'SecRule REQUEST_METHOD "@streq POST" \\',
    '    "id:920180,\\',
    '    phase:2,\\',
    '    block,\\',
    "    msg:'POST without Content-Length',\\",
    '    severity:\'WARNING\',\\',
    '    chain"',
    '    SecRule &REQUEST_HEADERS:Content-Length "@eq 0" \\',
    '        "chain"',
    '        SecRule &REQUEST_HEADERS:Transfer-Encoding "@eq 0" \\',
    "            \"t:none,setvar:'tx.anomaly_score_pl1=+%{tx.warning_anomaly_score}'\"",
    'SecMarker "END"',
  ].join('\n');

  test('a chain is one logical rule with its links; metadata from the first', () => {
    const p = parseSecLang(text, 'c.conf');
    assert.deepEqual(p.problems, []);
    assert.equal(p.counts.secRule, 3);
    const [r, m] = p.directives;
    assert.ok(r.type === 'rule' && m.type === 'marker');
    assert.equal(r.links.length, 3);
    assert.deepEqual(r.loc, { file: 'c.conf', line: 1, endLine: 11 });
    assert.deepEqual(r.links.map((l) => l.loc.line), [1, 8, 10]);
    assert.deepEqual([r.id, r.phase, r.severity, r.disruptive, r.msg], [920180, 2, 'WARNING', 'block', 'POST without Content-Length']);
    assert.deepEqual(r.links.map((l) => [l.variables[0].raw, l.operator!.name, l.operator!.argument]), [
      ['REQUEST_METHOD', 'streq', 'POST'],
      ['&REQUEST_HEADERS:Content-Length', 'eq', '0'],
      ['&REQUEST_HEADERS:Transfer-Encoding', 'eq', '0'],
    ]);
    assert.equal(r.links[2].setvars[0].key, 'anomaly_score_pl1');
  });

  test('a chain cut short by another directive or the end of the file is a problem', () => {
    const p = parseSecLang('SecRule ARGS "@rx a" "id:1,phase:2,pass,chain"\nSecMarker X\nSecRule ARGS "@rx b" "id:2,phase:2,pass,chain"\n', 'd.conf');
    assert.equal(p.problems.length, 2);
    assert.match(p.problems[0].message, /rule 1 .*SecMarker follows/);
    assert.match(p.problems[1].message, /rule 2 .*file ends/);
    assert.ok(rulesOf(p).every((r) => r.danglingChain));
  });

  test('metadata and disruptive actions in a chained link are problems', () => {
    const p = parseSecLang('SecRule ARGS "@rx a" "id:1,phase:2,block,chain"\n  SecRule ARGS "@rx b" "id:2,deny"\n', 'e.conf');
    assert.deepEqual(p.problems.map((q) => q.line), [2, 2]);
  });
});

describe('analyze: regex features', () => {
  test('constructs JavaScript lacks are named', () => {
    assert.deepEqual(regexFeatures('(?i)abc'), ['regex: leading (?i)']);
    assert.ok(regexFeatures('(?i:a)b').includes('regex: scoped flag group (?i:…)'));
    assert.ok(regexFeatures('a*+b').includes('regex: possessive quantifier'));
    assert.ok(regexFeatures('\\x{ff}').includes('regex: \\x{hh} escape'));
    assert.ok(regexFeatures('(?<!a)b').includes('regex: lookbehind'));
    assert.deepEqual(regexFeatures('[a$]\\$'), []);
  });
});

// ---------------------------------------------------------------------------------------
// The real CRS 3.3.4 request rules.

const CRS_DIR = process.env.CRS_RULES_DIR || '/usr/share/modsecurity-crs/rules';
const MISSING = `${CRS_DIR} is missing: install Debian's CRS 3.3.4 as root with \`apt-get install -y --no-install-recommends modsecurity-crs\` (or \`node scripts/crs/ensure-crs.mjs\`), or set CRS_RULES_DIR`;

describe('analyze: CRS 3.3.4 request rules', () => {
  let cached: Analysis | undefined;
  const analysis = (): Analysis => {
    if (!existsSync(CRS_DIR)) assert.fail(MISSING);
    return (cached ??= analyzeCrs(CRS_DIR));
  };

  test('every REQUEST-9xx file parses with zero problems', () => {
    const a = analysis();
    assert.deepEqual(a.problems, []);
    assert.deepEqual(
      a.files.map((f) => f.file.split('-')[1]),
      ['901', '903.9001', '903.9002', '903.9003', '903.9004', '903.9005', '903.9006', '905', '910', '911', '912', '913', '920', '921', '922', '930', '931', '932', '933', '934', '941', '942', '943', '944', '949'],
    );
  });

  test('exact counts: directives, logical and chained rules, detection rules per paranoia level', () => {
    const c = countAnalysis(analysis());
    assert.equal(c.files, 25);
    assert.equal(c.secRule, 672);
    assert.equal(c.secAction, 7);
    assert.equal(c.logicalRules, 535);
    assert.equal(c.chainedRules, 93);
    // §1.5 of crs-and-managed-rules.md (rules with a paranoia-level tag and a severity):
    // v3.3.5 has 135/49/19/7 = 210; the Debian 3.3.4 package (which backports 3.3.5's fix
    // for CVE-2023-38199) has exactly the same.
    assert.equal(c.taggedDetection, 210);
    // Two more rules score without a paranoia-level tag (920181, 921200, both in the PL1
    // section), so the converter's detection rules are 212: PL1 137.
    assert.equal(c.detection, 212);
    assert.deepEqual(c.detectionByLevel, [137, 49, 19, 7]);
    assert.deepEqual(c.bySeverity, { CRITICAL: 183, WARNING: 23, NOTICE: 6 });
    assert.deepEqual(c.byKind, { detection: 212, 'paranoia-skip': 129, 'blocking-evaluation': 1, 'score-sum': 4, init: 25, collector: 12, exclusion: 112, skip: 24, enforcement: 5, other: 11 });
    // Without 910 (IP reputation) and 912 (DoS), §1.5 gives 129/49/19/7 for v3.3.5 (tagged).
    const edge = countAnalysis(analysis(), (f) => !/^REQUEST-91[02]-/.test(f.file));
    assert.equal(edge.taggedDetection, 204);
  });

  test('per-file detection counts and paranoia levels (as §1.1 lists them for v3.3.5)', () => {
    const a = analysis();
    const per = Object.fromEntries(
      a.files.map((f) => {
        const c = countAnalysis(a, (x) => x === f);
        return [f.file.split('-')[1], c.detectionByLevel.join('/')];
      }),
    );
    assert.equal(per['913'], '3/2/0/0');
    assert.equal(per['920'], '37/8/3/5');
    assert.equal(per['921'], '9/2/2/0');
    assert.equal(per['932'], '12/1/2/0');
    assert.equal(per['941'], '24/6/0/0');
    assert.equal(per['942'], '16/24/7/2');
    assert.equal(per['944'], '4/4/1/0');
  });

  test('rule details: 942100, 920181, 921422 and 949110', () => {
    const rules = analysis().files.flatMap((f) => f.rules);
    const byId = (id: number) => rules.find((r) => r.id === id)!;
    const r = byId(942100);
    assert.deepEqual([r.kind, r.paranoiaLevel, r.severity, r.anomalyIncrement, r.phase, r.msg], ['detection', 1, 'CRITICAL', 5, 2, 'SQL Injection Attack Detected via libinjection']);
    assert.ok(r.tags.includes('attack-sqli'));
    assert.equal(r.rule.links[0].operator!.name, 'detectSQLi');
    assert.deepEqual(r.rule.links[0].transformations, ['utf8toUnicode', 'urlDecodeUni', 'removeNulls']);
    const t = byId(920181);
    assert.deepEqual([t.kind, t.paranoiaTag, t.paranoiaSection, t.paranoiaLevel, t.anomalyIncrement, t.chainLength], ['detection', null, 1, 1, 3, 2]);
    const u = byId(921422);
    assert.deepEqual([u.paranoiaTag, u.paranoiaSection, u.scoresInto], [2, 2, [1]]);
    const b = byId(949110);
    assert.equal(b.kind, 'blocking-evaluation');
    assert.equal(b.rule.links[0].operator!.argument, '%{tx.inbound_anomaly_score_threshold}');
    assert.deepEqual(analysis().inconsistencies.map((i) => i.id), [920181, 921200, 921422]);
  });

  test('the coverage report lists every file and feature', () => {
    const a = analysis();
    const md = renderCoverage(a);
    for (const f of a.files) assert.ok(md.includes(`| ${f.file} |`));
    assert.match(md, /\| operator: @detectSQLi \| 2 \| 2 \| pending \| 942100 942101 \|/);
    const withSupport = renderCoverage(a, { supported: (f) => !f.startsWith('regex:'), converted: new Set(['942100']) });
    assert.match(withSupport, /## Unsupported features and the rules they affect/);
    assert.match(withSupport, /REQUEST-942-APPLICATION-ATTACK-SQLI.conf \| 1 \/ 49 \|/);
  });
});

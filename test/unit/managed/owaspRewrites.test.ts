// The CRS rules the converter rewrites by hand because CRS compares a captured value with
// another value (920190, 931130, 943110) or counts a multipart part (922100): each generated
// rule against a direct implementation of what the CRS rule does in ModSecurity.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { compileExpression, prepareFields } from '../../../server/src/language/index';
import { OWASP_CRS_RULES } from '../../../server/src/managed/owaspCrs';

const CHECK = { allowManaged: true, plan: 'enterprise', phase: 'http_request_firewall_managed' } as const;

function ruleMatcher(ref: string): (fields: Record<string, unknown>) => boolean {
  const rule = OWASP_CRS_RULES.find((r) => r.ref === ref);
  assert.ok(rule, `${ref} is converted`);
  const { filter, diagnostics } = compileExpression(rule.expression, CHECK);
  assert.ok(filter, JSON.stringify(diagnostics));
  return (fields) => {
    const { values, errors } = prepareFields(fields);
    assert.deepEqual(errors, []);
    return filter.matches(values);
  };
}

describe('920190: Range: Invalid Last Byte Value', () => {
  const matches = ruleMatcher('920190');
  const range = (value: string, header = 'range') => matches({ 'crs.request_headers': { host: ['localhost'], [header]: [value] } });
  /** ModSecurity: the first `(\d+)-(\d+)` of the value, then `TX:2 @lt TX:1` as numbers. */
  const reference = (value: string): boolean => {
    const m = /(\d+)-(\d+)/.exec(value);
    return m !== null && BigInt(m[2]) < BigInt(m[1]);
  };

  const cases: [string, boolean][] = [
    ['bytes=10-5', true],
    ['bytes=5-10', false],
    ['bytes=5-5', false],
    ['bytes=10-9', true],
    ['bytes=10-10', false],
    ['bytes=0-0', false],
    ['bytes=1-0', true],
    ['bytes=007-6', true],
    ['bytes=7-0006', true],
    ['bytes=7-0008', false],
    ['bytes=000-0', false],
    ['bytes=123456-123455', true],
    ['bytes=123455-123456', false],
    ['bytes=199-200', false],
    ['bytes=200-199', true],
    // Only the first pair counts, as the capture takes the first match.
    ['bytes=1-2, 10-5', false],
    ['bytes=10-5, 1-2', true],
    ['bytes=-5, 9-3', true],
    ['bytes=5-, 9-3', true],
    ['bytes=12x-3, 4-5', false],
    ['bytes=', false],
    ['bytes=a-b', false],
    ['12345678901234567890-12345678901234567889', true],
    ['12345678901234567889-12345678901234567890', false],
  ];
  for (const [value, expected] of cases) {
    test(`${JSON.stringify(value)}: ${expected ? 'matches' : 'does not match'}`, () => {
      assert.equal(reference(value), expected, 'the reference agrees');
      assert.equal(range(value), expected);
    });
  }

  test('Request-Range counts too; no Range header, no match', () => {
    assert.equal(range('bytes=9-1', 'request-range'), true);
    assert.equal(matches({ 'crs.request_headers': { host: ['localhost'] } }), false);
  });

  test('agrees with ModSecurity\'s capture and comparison on generated values', () => {
    const num = fc.oneof(fc.integer({ min: 0, max: 2000 }).map(String), fc.bigInt({ min: 0n, max: 10n ** 17n }).map(String), fc.stringMatching(/^0{1,3}\d{1,4}$/));
    const piece = fc.oneof(fc.tuple(num, num).map(([a, b]) => `${a}-${b}`), num.map((a) => `-${a}`), num.map((a) => `${a}-`), fc.constantFrom('bytes=', ', ', ',', ' ', 'x'));
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 6 }), (pieces) => {
        const value = pieces.join('');
        // Beyond 18 digits ModSecurity's atoll saturates; the rewrite compares up to 20 exactly.
        fc.pre(!/[1-9]\d{18}/.test(value));
        assert.equal(range(value), reference(value), value);
      }),
      { numRuns: 400, seed: 920190 },
    );
  });
});

describe('931130: Possible Remote File Inclusion (RFI) Attack: Off-Domain Reference/Link', () => {
  const matches = ruleMatcher('931130');
  const req = (value: string, host?: string) => matches({ 'crs.args': { url: [value] }, 'crs.args_names': ['url'], 'crs.request_headers': host === undefined ? {} : { host: [host] } });
  // ModSecurity: `.` + the URL's host part must end with `.` + the Host header.
  const cases: [value: string, host: string | undefined, fires: boolean][] = [
    ['http://evil.example/shell.txt', 'localhost', true],
    ['http://localhost/page', 'localhost', false],
    ['https://www.localhost/page', 'localhost', false],
    ['https://notlocalhost/page', 'localhost', true],
    ['FTP://files.example.com', 'example.com', false],
    ['file://evil.example', 'example.com', true],
    ['http://example.com.evil.net/', 'example.com', true],
    ['http://EXAMPLE.com/', 'example.com', true],
    ['see http://evil.example/', 'localhost', false],
    ['http://evil.example/', undefined, true],
    ['http:///path', 'localhost', true],
  ];
  for (const [value, host, fires] of cases) {
    test(`${JSON.stringify(value)} with Host ${JSON.stringify(host ?? null)}: ${fires ? 'fires' : 'does not fire'}`, () => assert.equal(req(value, host), fires));
  }
});

describe('943110: Possible Session Fixation Attack: SessionID Parameter Name with Off-Domain Referer', () => {
  const matches = ruleMatcher('943110');
  const req = (arg: string, referer: string | undefined, host = 'localhost') =>
    matches({ 'crs.args_names': [arg], 'crs.args': { [arg]: ['x'] }, 'crs.request_headers': { host: [host], ...(referer !== undefined ? { referer: [referer] } : {}) } });
  const cases: [arg: string, referer: string | undefined, host: string, fires: boolean][] = [
    ['jsessionid', 'http://attacker.example/', 'localhost', true],
    ['PHPSESSID', 'https://attacker.example/a/b', 'localhost', true],
    ['jsessionid', 'http://localhost/', 'localhost', false],
    ['jsessionid', 'http://www.localhost/', 'localhost', false],
    ['jsessionid', 'http://evil-localhost/', 'localhost', false],
    ['jsessionid', 'http://attacker.example', 'localhost', false],
    ['jsessionid', undefined, 'localhost', false],
    ['q', 'http://attacker.example/', 'localhost', false],
  ];
  for (const [arg, referer, host, fires] of cases) {
    test(`${arg} with Referer ${JSON.stringify(referer ?? null)}: ${fires ? 'fires' : 'does not fire'}`, () => assert.equal(req(arg, referer, host), fires));
  }
});

describe('922100: Multipart content type global _charset_ definition is not allowed by policy', () => {
  const matches = ruleMatcher('922100');
  const req = (processor: string, charset: string | undefined) =>
    matches({ 'crs.reqbody_processor': processor, 'crs.args_post': charset === undefined ? {} : { _charset_: [charset] }, 'crs.args': charset === undefined ? {} : { _charset_: [charset] } });
  const cases: [processor: string, charset: string | undefined, fires: boolean][] = [
    ['MULTIPART', 'utf-7', true],
    ['MULTIPART', 'UTF-8', false],
    ['MULTIPART', 'windows-1252', false],
    ['MULTIPART', undefined, false],
    ['URLENCODED', 'utf-7', false],
  ];
  for (const [processor, charset, fires] of cases) {
    test(`${processor} with _charset_ ${JSON.stringify(charset ?? null)}: ${fires ? 'fires' : 'does not fire'}`, () => assert.equal(req(processor, charset), fires));
  }
});

describe('921180: HTTP Parameter Pollution (an argument name given twice)', () => {
  const matches = ruleMatcher('921180');
  /** ModSecurity: one TX counter per name (TX names without case), flagged above 1. */
  const reference = (names: readonly string[]): boolean => {
    const counts = new Map<string, number>();
    for (const n of names) if (/[^\n]/.test(n)) counts.set(n.toLowerCase(), (counts.get(n.toLowerCase()) ?? 0) + 1);
    return [...counts.values()].some((c) => c > 1);
  };
  const cases: [string[], boolean][] = [
    [['a', 'b', 'c'], false],
    [['a', 'b', 'a'], true],
    [['id', 'ID'], true],
    [['ab', 'a', 'b'], false],
    [['a', 'ab', 'b', 'ba'], false],
    [['x[]', 'x[]'], true],
    [['', ''], false],
    [['\n', '\n'], false],
    [['a\x00b', 'b'], false], // a NUL byte is part of one name (the joined-with-NUL pattern saw two)
    [[], false],
  ];
  for (const [names, fires] of cases) {
    test(`${JSON.stringify(names)}: ${fires ? 'fires' : 'does not fire'}`, () => {
      assert.equal(reference(names), fires, 'the reference agrees');
      assert.equal(matches({ 'crs.args_names': names }), fires);
    });
  }

  test('agrees with the counters on generated names', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[aAb_[\]\n]{0,3}$/), { maxLength: 6 }), (names) => {
        assert.equal(matches({ 'crs.args_names': names }), reference(names), JSON.stringify(names));
      }),
      { numRuns: 400, seed: 921180 },
    );
  });
});

describe('920480: Request content type charset is not allowed by policy', () => {
  const matches = ruleMatcher('920480');
  const ct = (value: string) => matches({ 'crs.request_headers': { host: ['localhost'], 'content-type': [value] } });
  /**
   * ModSecurity: the first `charset\s*=\s*["']?([^;"'\s]+)` of the lower-cased value (TX:1)
   * must not match `^utf-8|iso-8859-1|iso-8859-15|windows-1252$` (crs-setup's default).
   */
  const reference = (value: string): boolean => {
    const m = /charset\s*=\s*["']?([^;"'\s]+)/.exec(value.toLowerCase());
    return m !== null && !/^utf-8|iso-8859-1|iso-8859-15|windows-1252$/.test(m[1]);
  };
  const cases: [string, boolean][] = [
    ['application/x-www-form-urlencoded; charset=utf-8', false],
    ['text/plain; charset=UTF-7', true],
    ['text/plain; charset="iso-8859-1"', false],
    ['text/plain; charset=x-windows-1252', false],
    ['text/plain; charset=windows-1252x', true],
    ['text/plain', false],
    // Only the first charset counts, as the capture takes the first match (920530-2).
    ['application/x-www-form-urlencoded; charset=utf-8; charset=utf-7', false],
    ['application/x-www-form-urlencoded; charset=utf-7; charset=utf-8', true],
    ['text/plain; charset=; charset=utf-7', true],
    ['text/plain; charset=""; charset=utf-8', false],
  ];
  for (const [value, expected] of cases) {
    test(`${JSON.stringify(value)}: ${expected ? 'matches' : 'does not match'}`, () => {
      assert.equal(reference(value), expected, 'the reference agrees');
      assert.equal(ct(value), expected);
    });
  }

  test('agrees with ModSecurity\'s capture and comparison on generated values', () => {
    const piece = fc.constantFrom('charset', '=', ' ', '"', "'", ';', 'utf-8', 'utf-7', 'iso-8859-1', 'windows-1252', 'x', 'text/plain');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 8 }), (pieces) => {
        const value = pieces.join('');
        assert.equal(ct(value), reference(value), value);
      }),
      { numRuns: 600, seed: 920480 },
    );
  });
});

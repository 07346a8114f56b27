// `rulesmith serve --proxy …`: the proxy's flags and their errors.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { UsageError } from '../../../server/src/cli/input';
import type { Io } from '../../../server/src/cli/io';
import { main } from '../../../server/src/cli/main';
import { serveArgs, serveOptions } from '../../../server/src/cli/serve';
import { defaultProxyWorkers } from '../../../server/src/cli/serveProxy';
import type { TrustedPeers } from '../../../server/src/proxy/edgeFields';

const opts = (...args: string[]) => serveOptions(serveArgs(args)).proxy;
const error = (...args: string[]) => {
  try {
    opts(...args);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  return 'no error';
};

describe('serve --proxy flags', () => {
  it('takes several zones and the defaults', () => {
    assert.deepEqual(opts('--proxy', 'a.test=http://127.0.0.1:3000', '--proxy', 'b.test=http://127.0.0.1:4000/app'), {
      routes: [
        { zone: 'a.test', upstream: 'http://127.0.0.1:3000' },
        { zone: 'b.test', upstream: 'http://127.0.0.1:4000/app' },
      ],
      host: '127.0.0.1',
      port: 8081,
      upstreamTimeoutMs: 100_000,
      headerTimeoutMs: 20_000,
      challenge: 'interstitial',
      trust: 'nobody',
      workers: defaultProxyWorkers(),
    });
    assert.equal(opts(), undefined);
    // --proxy-listen alone: a proxy with no zone yet, started from the extension.
    assert.deepEqual([opts('--proxy-listen', '127.0.0.1:0')?.routes, opts('--proxy-listen', '127.0.0.1:0')?.port], [[], 0]);
  });

  it('evaluates in one worker thread by default when the machine has two cores or more, on the proxy thread with one', () => {
    assert.deepEqual([1, 2, 4, 64].map((cores) => defaultProxyWorkers(cores)), [0, 1, 1, 1]);
    assert.equal(opts('--proxy', 'a.test=http://u', '--proxy-workers', '0')?.workers, 0);
  });

  it('takes the listener, limits, timeouts and modes', () => {
    const o = opts('--proxy', 'a.test=http://u', '--proxy-listen', '[::1]:0', '--inspect-body-limit', '4096', '--upstream-timeout', '2.5', '--header-timeout', '5', '--challenge', 'pass', '--trust-proxy', '--proxy-workers', '2');
    assert.deepEqual([o?.host, o?.port, o?.inspectBodyLimit, o?.upstreamTimeoutMs, o?.headerTimeoutMs, o?.challenge, o?.trust, o?.workers], ['::1', 0, 4096, 2500, 5000, 'pass', 'everyone', 2]);
  });

  it('says what is wrong', () => {
    assert.equal(error('--proxy', 'a.test'), '--proxy takes ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000), got "a.test"');
    assert.equal(error('--challenge', 'pass'), '--challenge needs --proxy ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000)');
    assert.equal(error('--proxy', 'a=http://u', '--proxy-listen', '8081'), '--proxy-listen takes HOST:PORT (e.g. 127.0.0.1:8081; port 0 picks a free one), got "8081"');
    assert.equal(error('--proxy', 'a=http://u', '--challenge', 'solve'), '--challenge takes interstitial, pass or block, got "solve"');
    assert.equal(error('--proxy', 'a=http://u', '--proxy-workers', 'all'), '--proxy-workers takes a number of evaluation threads from 0 (evaluate on the proxy\'s thread) to 64, got "all"');
    assert.equal(error('--proxy', 'a=http://u', '--upstream-timeout', '0'), '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "0"');
    assert.equal(error('--proxy', 'a.test=http://u', '--proxy', 'A.test=http://v'), '--proxy A.test=… is given more than once; a zone has one upstream');
  });
});

// --upstream-timeout and --header-timeout refuse what would round to 0 ms: an upstream
// timeout of 0 ms answers every request 504, a header timeout of 0 turns Node's off.
describe('proxy timeouts under a millisecond', () => {
  const zone = ['--proxy', 'a.test=http://127.0.0.1:3000'];

  it('are refused with the flag, the value and what is allowed', () => {
    assert.equal(error(...zone, '--upstream-timeout', '0.0004'), '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "0.0004", which is less than 1 ms');
    assert.equal(error(...zone, '--header-timeout', '0.0001'), '--header-timeout takes seconds from 0.001 to 3600 (e.g. --header-timeout 30), got "0.0001", which is less than 1 ms');
    // Under 0.001 even when it would round up to 1 ms: the range says 0.001.
    assert.equal(error(...zone, '--header-timeout', '0.0009'), '--header-timeout takes seconds from 0.001 to 3600 (e.g. --header-timeout 30), got "0.0009", which is less than 1 ms');
    assert.equal(error(...zone, '--upstream-timeout', '0.000'), '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "0.000"');
  });

  it('take 1 ms and more, in whole milliseconds', () => {
    const o = opts(...zone, '--upstream-timeout', '0.001', '--header-timeout', '0.0015')!;
    assert.deepEqual([o.upstreamTimeoutMs, o.headerTimeoutMs], [1, 2]);
    assert.deepEqual([opts(...zone, '--upstream-timeout', '3600')!.upstreamTimeoutMs, error(...zone, '--upstream-timeout', '3600.0001')], [3_600_000, '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "3600.0001"']);
  });
});

const ZONE = ['--proxy', 'a.test=http://127.0.0.1:3000'];

/** `rulesmith serve ARGS` as the CLI runs it, up to the point where it would start: its exit status and stderr's first line. */
function serve(...args: string[]): { code: number; err: string } {
  let err = '';
  const io: Io = { out: () => undefined, err: (s) => void (err += s), readFile: () => '', writeFile: () => undefined, readStdin: () => '' };
  const code = main(['serve', ...args], io);
  return { code, err: err.split('\n')[0]! };
}

describe('serve --fields-file', () => {
  it('an unreadable or bad file is reported alone, exit 2, without the usage text after it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fields-'));
    try {
      const bad = join(dir, 'fields.json');
      writeFileSync(bad, '[{"country": "DE"}]');
      for (const [file, line] of [
        [join(dir, 'none.json'), /^rulesmith: --fields-file: cannot read \S+none\.json: ENOENT/],
        [bad, /^rulesmith: --fields-file \S+fields\.json/],
      ] as const) {
        let err = '';
        const io: Io = { out: () => undefined, err: (s) => void (err += s), readFile: () => '', writeFile: () => undefined, readStdin: () => '' };
        assert.equal(main(['serve', '--proxy', 'a=http://u', '--fields-file', file], io), 2);
        const lines = err.split('\n').filter(Boolean);
        assert.equal(lines.length, 1, err);
        assert.match(lines[0]!, line);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('serve --trust-proxy-from', () => {
  it('takes comma-separated ranges, repeated: the peers trusted', () => {
    const o = opts(...ZONE, '--trust-proxy-from', '10.0.0.0/8,2001:db8::/32', '--trust-proxy-from', '192.0.2.7');
    const ranges = o?.trust as TrustedPeers;
    assert.deepEqual([ranges.cidrs, ranges.v4.length, ranges.v6.length], [['10.0.0.0/8', '2001:db8::/32', '192.0.2.7'], 2, 1]);
    // With --trust-proxy too: the ranges still decide.
    assert.deepEqual((opts(...ZONE, '--trust-proxy', '--trust-proxy-from=127.0.0.0/8')?.trust as TrustedPeers).cidrs, ['127.0.0.0/8']);
  });

  it('leaves --trust-proxy alone as it was: every peer; neither flag: nobody', () => {
    assert.deepEqual([opts(...ZONE, '--trust-proxy')?.trust, opts(...ZONE)?.trust], ['everyone', 'nobody']);
  });

  it('says what is wrong', () => {
    assert.equal(error(...ZONE, '--trust-proxy-from', '10.0.0.0/33'), '--trust-proxy-from: "10.0.0.0/33" is not an IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32)');
    assert.equal(error(...ZONE, '--trust-proxy-from', '10.0.0.0/8', '--trust-proxy-from', 'cloudflare'), '--trust-proxy-from: "cloudflare" is not an IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32)');
    assert.equal(error(...ZONE, '--trust-proxy-from='), '--trust-proxy-from needs at least one IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32), got ""');
    // node's own message (parseArgs) for a flag without its value.
    assert.match(error(...ZONE, '--trust-proxy-from'), /^Option '--trust-proxy-from <value>' argument missing/);
    assert.equal(error('--trust-proxy-from', '10.0.0.0/8'), '--trust-proxy-from needs --proxy ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000)');
    const many = Array.from({ length: 1001 }, (_, i) => `192.0.${i % 256}.${Math.floor(i / 256)}`).join(',');
    assert.equal(error(...ZONE, '--trust-proxy-from', many), '--trust-proxy-from takes at most 1000 ranges, got 1001');
  });

  it('stops serve with exit status 2 and the bad entry, before it starts', () => {
    assert.deepEqual(serve(...ZONE, '--trust-proxy-from', '10.0.0.0/8,10.0.0.0/33'), { code: 2, err: 'rulesmith: --trust-proxy-from: "10.0.0.0/33" is not an IP address or CIDR range (like 10.0.0.0/8 or 2001:db8::/32)' });
    assert.deepEqual(serve(...ZONE, '--trust-proxy-from', '10.0.0.1/8'), {
      code: 2,
      err: 'rulesmith: --trust-proxy-from: "10.0.0.1/8" has bits set past its /8 prefix; write the range with its first address (10.0.0.0/8), or 10.0.0.1 alone for that one address',
    });
  });
});

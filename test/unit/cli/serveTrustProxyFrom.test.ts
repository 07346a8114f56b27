// `rulesmith serve --proxy … --trust-proxy-from CIDR[,CIDR…]`: the flag (repeatable, implying
// --trust-proxy) and its errors, which stop serve before it starts with exit status 2.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../../server/src/cli/input';
import { main, type Io } from '../../../server/src/cli/main';
import { serveArgs, serveOptions } from '../../../server/src/cli/serve';

const ZONE = ['--proxy', 'a.test=http://127.0.0.1:3000'];
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

/** `rulesmith serve ARGS` as the CLI runs it, up to the point where it would start: its exit status and stderr's first line. */
function serve(...args: string[]): { code: number; err: string } {
  let err = '';
  const io: Io = { out: () => undefined, err: (s) => void (err += s), readFile: () => '', writeFile: () => undefined, readStdin: () => '' };
  const code = main(['serve', ...args], io);
  return { code, err: err.split('\n')[0]! };
}

describe('serve --trust-proxy-from', () => {
  it('takes comma-separated ranges, repeated, and implies --trust-proxy', () => {
    const o = opts(...ZONE, '--trust-proxy-from', '10.0.0.0/8,2001:db8::/32', '--trust-proxy-from', '192.0.2.7');
    assert.equal(o?.trustProxy, true);
    assert.deepEqual(o?.trustProxyFrom?.cidrs, ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7']);
    assert.deepEqual([o?.trustProxyFrom?.v4.length, o?.trustProxyFrom?.v6.length], [2, 1]);
    // With --trust-proxy too: the same.
    const both = opts(...ZONE, '--trust-proxy', '--trust-proxy-from=127.0.0.0/8');
    assert.deepEqual([both?.trustProxy, both?.trustProxyFrom?.cidrs], [true, ['127.0.0.0/8']]);
  });

  it('leaves --trust-proxy alone as it was: every peer, no ranges', () => {
    const o = opts(...ZONE, '--trust-proxy');
    assert.deepEqual([o?.trustProxy, o?.trustProxyFrom, 'trustProxyFrom' in o!], [true, undefined, false]);
    assert.deepEqual([opts(...ZONE)?.trustProxy, 'trustProxyFrom' in opts(...ZONE)!], [false, false]);
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

// `rulesmith serve --proxy …`: the proxy's flags and their errors.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../../server/src/cli/input';
import { serveArgs, serveOptions } from '../../../server/src/cli/serve';
import { defaultProxyWorkers } from '../../../server/src/cli/serveProxy';

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
      trustProxy: false,
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
    assert.deepEqual([o?.host, o?.port, o?.inspectBodyLimit, o?.upstreamTimeoutMs, o?.headerTimeoutMs, o?.challenge, o?.trustProxy, o?.workers], ['::1', 0, 4096, 2500, 5000, 'pass', true, 2]);
  });

  it('says what is wrong', () => {
    assert.equal(error('--proxy', 'a.test'), '--proxy takes ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000), got "a.test"');
    assert.equal(error('--challenge', 'pass'), '--challenge needs --proxy ZONE=UPSTREAM_URL (e.g. --proxy example.com=http://127.0.0.1:3000)');
    assert.equal(error('--proxy', 'a=http://u', '--proxy-listen', '8081'), '--proxy-listen takes HOST:PORT (e.g. 127.0.0.1:8081; port 0 picks a free one), got "8081"');
    assert.equal(error('--proxy', 'a=http://u', '--challenge', 'solve'), '--challenge takes interstitial, pass or block, got "solve"');
    assert.equal(error('--proxy', 'a=http://u', '--proxy-workers', 'all'), '--proxy-workers takes a number of evaluation threads from 0 (evaluate on the proxy\'s thread) to 64, got "all"');
    assert.equal(error('--proxy', 'a=http://u', '--upstream-timeout', '0'), '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "0"');
    assert.match(error('--proxy', 'a=http://u', '--fields-file', 'no-such-fields.json'), /^--fields-file: cannot read no-such-fields\.json: ENOENT/);
  });
});

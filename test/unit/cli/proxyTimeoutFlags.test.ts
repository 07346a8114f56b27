// --upstream-timeout and --header-timeout refuse what would round to 0 ms: an upstream
// timeout of 0 ms answers every request 504, a header timeout of 0 turns Node's off.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from '../../../server/src/cli/input';
import { serveArgs, serveOptions } from '../../../server/src/cli/serve';

const opts = (...args: string[]) => serveOptions(serveArgs(['--proxy', 'a.test=http://127.0.0.1:3000', ...args])).proxy!;
const error = (...args: string[]) => {
  try {
    opts(...args);
  } catch (e) {
    if (e instanceof UsageError) return e.message;
    throw e;
  }
  return 'no error';
};

describe('proxy timeouts under a millisecond', () => {
  it('are refused with the flag, the value and what is allowed', () => {
    assert.equal(error('--upstream-timeout', '0.0004'), '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "0.0004", which is less than 1 ms');
    assert.equal(error('--header-timeout', '0.0001'), '--header-timeout takes seconds from 0.001 to 3600 (e.g. --header-timeout 30), got "0.0001", which is less than 1 ms');
    // Under 0.001 even when it would round up to 1 ms: the range says 0.001.
    assert.equal(error('--header-timeout', '0.0009'), '--header-timeout takes seconds from 0.001 to 3600 (e.g. --header-timeout 30), got "0.0009", which is less than 1 ms');
    assert.equal(error('--upstream-timeout', '0.000'), '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "0.000"');
  });

  it('take 1 ms and more, in whole milliseconds', () => {
    const o = opts('--upstream-timeout', '0.001', '--header-timeout', '0.0015');
    assert.deepEqual([o.upstreamTimeoutMs, o.headerTimeoutMs], [1, 2]);
    assert.deepEqual([opts('--upstream-timeout', '3600').upstreamTimeoutMs, error('--upstream-timeout', '3600.0001')], [3_600_000, '--upstream-timeout takes seconds from 0.001 to 3600 (e.g. --upstream-timeout 30), got "3600.0001"']);
  });
});

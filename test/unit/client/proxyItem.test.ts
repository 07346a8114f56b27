// The Zones view's "Proxy" item: its counters, and the time in the WAF once requests came.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProxiedZone } from '../../../client/src/api/proxyControl';
import { proxyDescription, proxyTooltip } from '../../../client/src/views/proxyItem';

const proxied: ProxiedZone = {
  zone: 'app.test',
  zoneId: '0123456789abcdef0123456789abcdef',
  upstream: 'http://127.0.0.1:3000/',
  url: 'http://app.test.localhost:8081/',
  requests: 12,
  blocked: 3,
  challenged: 1,
  forwarded: 8,
  upstreamErrors: 0,
  evaluation: { p50: 0.42, p99: 1.3 },
};

test('the description counts requests, blocks and challenges', () => {
  assert.equal(proxyDescription(proxied), 'http://app.test.localhost:8081/ · 12 requests, 3 blocked, 1 challenged');
});

test("the tooltip gives the time in the WAF per request once the zone's proxy had requests", () => {
  assert.equal(
    proxyTooltip('app.test', proxied),
    "WAF proxy for app.test → http://127.0.0.1:3000/\nOpen http://app.test.localhost:8081/ to browse the app through the zone's rules.\n8 forwarded, 0 upstream errors\nTime in the WAF per request: p50 0.42 ms, p99 1.3 ms",
  );
  const idle = { ...proxied, requests: 0, forwarded: 0, evaluation: { p50: 0, p99: 0 } };
  assert.equal(proxyTooltip('app.test', idle).split('\n').length, 3);
  const older = { ...proxied, evaluation: undefined };
  assert.equal(proxyTooltip('app.test', older).split('\n').at(-1), '8 forwarded, 0 upstream errors');
  // With the part spent evaluating: the rest was the wait for the evaluation worker.
  const split = { ...proxied, evaluation: { p50: 0.42, p99: 1.3, evaluating: { p50: 0.3, p99: 0.7 } } };
  assert.equal(proxyTooltip('app.test', split).split('\n').at(-1), 'Time in the WAF per request: p50 0.42 ms, p99 1.3 ms (evaluating p50 0.3 ms, p99 0.7 ms)');
});

test('the tooltip counts the 503s the proxy gave itself (overload, a failed store) only when there were some', () => {
  assert.equal(
    proxyTooltip('app.test', { ...proxied, unavailable: 4 }).split('\n')[2],
    '8 forwarded, 0 upstream errors, 4 answered 503 by the proxy (overloaded or the rules store failed: see its log)',
  );
  assert.equal(proxyTooltip('app.test', { ...proxied, unavailable: 0 }).split('\n')[2], '8 forwarded, 0 upstream errors');
});

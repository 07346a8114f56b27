// The text of the Zones view's "Proxy" item (zonesView.ts), apart from VS Code so that it
// can be tested: the live counters, and what the zone's rules cost a request.
import type { ProxiedZone } from '../api/proxyControl';

export function proxyDescription(p: ProxiedZone): string {
  return `${p.url} · ${p.requests} requests, ${p.blocked} blocked, ${p.challenged} challenged`;
}

export function proxyTooltip(zoneName: string, p: ProxiedZone): string {
  const counts = `${p.forwarded} forwarded, ${p.upstreamErrors} upstream errors`;
  // Only when there were some: they mean overload or a failed store (docs/proxy.md "Faults").
  const unavailable = p.unavailable ? `, ${p.unavailable} answered 503 by the proxy (overloaded or the rules store failed: see its log)` : '';
  const lines = [`WAF proxy for ${zoneName} → ${p.upstream}`, `Open ${p.url} to browse the app through the zone's rules.`, counts + unavailable];
  // Older proxies do not report it; before a request there is nothing to report.
  if (p.evaluation && p.requests > 0) {
    const e = p.evaluation;
    // What is not evaluating is waiting for the evaluation worker (docs/proxy.md "Threads").
    const evaluating = e.evaluating ? ` (evaluating p50 ${e.evaluating.p50} ms, p99 ${e.evaluating.p99} ms)` : '';
    lines.push(`Time in the WAF per request: p50 ${e.p50} ms, p99 ${e.p99} ms${evaluating}`);
  }
  return lines.join('\n');
}

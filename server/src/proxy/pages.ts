/**
 * The pages the proxy answers with itself: the block page, the challenge interstitial, and
 * the error pages (unknown zone, upstream down or slow, bad request), each naming its ray
 * id so a user can find the request in the log and the security events.
 */

export interface Page {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const STYLE = 'body{font:16px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}h1{font-size:1.6em}code{background:#f3f3f3;padding:0 .2em}.ray{color:#666;font-size:.9em;margin-top:2em}button{font-size:1em;padding:.4em 1.2em}';

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function html(status: number, title: string, inner: string, rayId: string, extra: Record<string, string> = {}): Page {
  const body = `<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body>\n<h1>${escapeHtml(title)}</h1>\n${inner}\n<p class="ray">Ray ID: <code>${escapeHtml(rayId)}</code> · Rulesmith WAF proxy</p>\n</body></html>\n`;
  return { status, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...extra }, body };
}

export interface BlockInfo {
  readonly rayId: string;
  readonly zone: string;
  readonly clientIp: string;
  /** The rule that blocked: its description or id. */
  readonly rule?: string;
  /** 429 for a rate limit's block, else 403. */
  readonly status: number;
}

export function blockPage(b: BlockInfo): Page {
  const why = b.status === 429 ? 'You have sent too many requests' : 'Sorry, you have been blocked';
  return html(
    b.status,
    why,
    `<p>The WAF rules of <code>${escapeHtml(b.zone)}</code> stopped this request${b.rule ? ` (rule: <code>${escapeHtml(b.rule)}</code>)` : ''}.</p>\n<p>Your address: <code>${escapeHtml(b.clientIp)}</code></p>`,
    b.rayId,
  );
}

/**
 * The interstitial: a form that posts to the proxy's challenge path, which sets the clearance
 * cookie, with the challenged request's ray id (`ray`), so that the solve is recorded for the
 * rule that challenged (proxy.ts `passChallenge`), and its signed `pass` (clearance.ts
 * `passToken`). `ray` and `pass` come first: the form is read up to 4 KB, and a long URL in
 * `return` (escaped again by the browser) must not push them out.
 */
export function challengePage(rayId: string, pass: string, zone: string, action: string, returnTo: string, formPath: string): Page {
  return html(
    403,
    'Just a moment…',
    `<p>A <code>${escapeHtml(action)}</code> rule of <code>${escapeHtml(zone)}</code> asks to check this browser first. The Rulesmith proxy does not run a real challenge: press the button to pass it (a clearance cookie for this zone, valid for 30 minutes).</p>\n<form method="post" action="${escapeHtml(formPath)}"><input type="hidden" name="ray" value="${escapeHtml(rayId)}"><input type="hidden" name="pass" value="${escapeHtml(pass)}"><input type="hidden" name="return" value="${escapeHtml(returnTo)}"><button type="submit">I am human — continue</button></form>`,
    rayId,
    { 'cf-mitigated': 'challenge' },
  );
}

/**
 * A press of the interstitial's button without a pass this proxy made for this visitor and
 * zone: no clearance, so that another site's form cannot pass a challenge for the browser
 * that submits it.
 */
export function challengeNotPassedPage(rayId: string, zone: string, returnTo: string): Page {
  return html(
    403,
    'The challenge was not passed',
    `<p>This press answers no challenge the Rulesmith proxy served to this browser for <code>${escapeHtml(zone)}</code>: the challenge expired (after 30 minutes), was served before the proxy restarted, was served to another browser, or the form came from another page or site. No clearance cookie was set.</p>\n<p><a href="${escapeHtml(returnTo)}">Open the page again</a> to get a new challenge.</p>`,
    rayId,
    { 'cf-mitigated': 'challenge' },
  );
}

export function unknownZonePage(rayId: string, host: string, zones: readonly string[]): Page {
  return html(
    530,
    'Error 1001: unknown host',
    `<p>The proxy serves no zone for the host <code>${escapeHtml(host || '(none)')}</code>.</p>\n<p>Zones behind this proxy: ${zones.map((z) => `<code>${escapeHtml(z)}</code>`).join(', ') || 'none'}. Send the request with one of them (or a host name under it) as the Host header, e.g. open <code>http://${escapeHtml(zones[0] ?? 'example.com')}.localhost:PORT/</code>.</p>`,
    rayId,
  );
}

/** Errors that mean nothing answered at the upstream's address (the app is not running, or the address is wrong). */
const UNREACHABLE = /^(ECONNREFUSED|ENOTFOUND|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN)\b/;

export function badGatewayPage(rayId: string, upstream: string, reason: string): Page {
  const text = UNREACHABLE.test(reason)
    ? `could not be reached: ${escapeHtml(reason)}.</p><p>Is the application running?`
    : `did not give an answer the proxy could relay: ${escapeHtml(reason)}.`;
  return html(502, 'Error 502: bad gateway', `<p>The upstream <code>${escapeHtml(upstream)}</code> ${text}</p>`, rayId);
}

export function gatewayTimeoutPage(rayId: string, upstream: string, seconds: number): Page {
  return html(504, 'Error 504: gateway timeout', `<p>The upstream <code>${escapeHtml(upstream)}</code> did not answer within ${seconds} s (<code>--upstream-timeout</code>).</p>`, rayId);
}

export function zoneErrorPage(rayId: string, zone: string, reason: string): Page {
  return html(500, 'Error 500: the zone cannot be evaluated', `<p>The request to <code>${escapeHtml(zone)}</code> could not be evaluated: ${escapeHtml(reason)}.</p>`, rayId);
}

/** How long a client refused for overload is told to wait (`Retry-After`, seconds): the queue drains in far less. */
export const RETRY_AFTER_S = 1;

/** The request was not evaluated for want of room or time (a full queue, a hung worker): 503, try again shortly. */
export function overloadedPage(rayId: string, zone: string, reason: string): Page {
  return html(
    503,
    'Error 503: the WAF is overloaded',
    `<p>The WAF proxy could not evaluate this request to <code>${escapeHtml(zone)}</code> now: ${escapeHtml(reason)}. It was not forwarded. Try again in a moment.</p>`,
    rayId,
    { 'retry-after': String(RETRY_AFTER_S) },
  );
}

/**
 * The rules service's store failed to make a write durable (service/store.ts StoreUnavailable):
 * the configuration the proxy holds may include a deployment the restart takes back, so it
 * forwards nothing until `serve` is restarted. The store's own error (it names files) goes to
 * the log, not to the client.
 */
export function storeFailedPage(rayId: string): Page {
  return html(
    503,
    'Error 503: the rules store failed',
    '<p>The rules service could not save a change to its store (a failed fsync), so the WAF proxy cannot vouch for the rules it would enforce: a deployment it holds may be gone when the store is opened again. No request is forwarded until <code>rulesmith serve</code> is restarted.</p>',
    rayId,
  );
}

// Where credentials may go (no `vscode` import: tested in plain Node).
//   - https anywhere, plain http only to this machine (127.0.0.0/8, ::1, localhost);
//   - a token from the environment (RULESMITH_API_TOKEN) only to the URL named by
//     RULESMITH_API_URL, or — when that is not set — to a loopback service (the
//     `npm start` demo): a workspace's settings pointing rulesmith.api.baseUrl at another
//     server must not collect a token that happens to be in the environment;
//   - the WAF proxy's control API gets the service's token only on the service's own host
//     (proxyTokenRefusal): rulesmith.proxy.url is a setting a workspace may set too.

import { isLoopback } from '../../../server/src/loopback';

/**
 * Credentials go only over https, or plain http to this machine: an http:// base URL on
 * another host would send the token in the clear. Returns why not, or undefined.
 */
export function insecureBaseUrl(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `rulesmith.api.baseUrl is not a URL (${url})`;
  }
  return encrypted(url) ? undefined : `rulesmith.api.baseUrl (${u.origin}) is not https: the API token would travel unencrypted`;
}

/** https, or plain http that stays on this machine: where a credential may travel. */
function encrypted(url: string): boolean {
  const protocol = new URL(url).protocol;
  return protocol === 'https:' || (protocol === 'http:' && isLoopback(url));
}

/** Whether a token from the environment may be sent to `baseUrl` (see above). */
export function envTokenAllowed(baseUrl: string, envUrl: string | undefined): boolean {
  const norm = (u: string) => u.trim().replace(/\/+$/, '');
  if (envUrl && envUrl.trim() !== '') return norm(envUrl) === norm(baseUrl) || norm(`${norm(envUrl)}/client/v4`) === norm(baseUrl);
  return isLoopback(baseUrl);
}

/**
 * Why the rules service's token may not go to the WAF proxy at `proxyUrl`, or undefined
 * when it may: the proxy must be on the host of the service the token is for
 * (`serviceUrl`, where `rulesmith serve` runs both), and reached over https or on this
 * machine. A workspace's rulesmith.proxy.url pointing elsewhere gets no token.
 */
export function proxyTokenRefusal(proxyUrl: string, serviceUrl: string): string | undefined {
  let proxy: URL;
  let service: URL;
  try {
    proxy = new URL(proxyUrl);
    service = new URL(serviceUrl);
  } catch {
    return `rulesmith.proxy.url is not a URL (${proxyUrl})`;
  }
  if (proxy.hostname.toLowerCase() !== service.hostname.toLowerCase()) {
    return `the WAF proxy at ${proxy.origin} is not on the rules service's host (${service.hostname}): Rulesmith sends the service's token only there; set rulesmith.proxy.url to the proxy \`rulesmith serve\` runs beside the service`;
  }
  if (!encrypted(proxyUrl)) {
    return `the WAF proxy at ${proxy.origin} is not https: the service's token would travel unencrypted`;
  }
  return undefined;
}

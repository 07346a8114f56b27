/**
 * The lines `rulesmith serve` prints once each listener is up, which whatever starts it waits
 * for (the extension, `npm start`, the e2e tests): the API's, then with `--proxy-listen` the
 * WAF proxy's (docs/proxy.md). The text is serveReady.json, which scripts import too.
 */
import lines from './serveReady.json';

/** Each line's text, and the pattern of the URL that follows it (scripts build the same regexes from the JSON). */
export const READY_LINES: { readonly api: string; readonly apiUrl: string; readonly proxy: string; readonly proxyUrl: string } = lines;
/** The API's line; group 1 is its base URL. */
export const SERVE_READY = new RegExp(`${lines.api}(${lines.apiUrl})`);
/** The WAF proxy's line; group 1 is its URL. */
export const PROXY_READY = new RegExp(`${lines.proxy}(${lines.proxyUrl})`);

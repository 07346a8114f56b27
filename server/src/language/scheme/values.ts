/**
 * Well-known value domains of scheme fields. Completion offers them and the checker can
 * warn when a comparison uses a value outside the domain (it can never match).
 *
 * Only lists that are closed and stable belong here; when a list is known to be
 * incomplete (bot categories grow over time), a lint built on it should stay a hint.
 */

/** HTTP methods Cloudflare reports in `http.request.method` (always uppercase). */
export const HTTP_METHODS: readonly string[] = [
  'GET',
  'HEAD',
  'POST',
  'PUT',
  'DELETE',
  'CONNECT',
  'OPTIONS',
  'TRACE',
  'PATCH',
  'PURGE',
];

/** Protocol versions seen in `http.request.version`. */
export const HTTP_VERSIONS: readonly string[] = ['HTTP/1.0', 'HTTP/1.1', 'HTTP/2', 'HTTP/3'];

/** Continent codes of `ip.src.continent`; `T1` is Cloudflare's code for the Tor network. */
export const CONTINENT_CODES: readonly string[] = ['AF', 'AN', 'AS', 'EU', 'NA', 'OC', 'SA', 'T1'];

/** The officially assigned ISO 3166-1 alpha-2 codes (249 of them), sorted. */
export const ISO_COUNTRY_CODES: readonly string[] = (
  'AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ ' +
  'BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ ' +
  'CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ ' +
  'DE DJ DK DM DO DZ ' +
  'EC EE EG EH ER ES ET ' +
  'FI FJ FK FM FO FR ' +
  'GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY ' +
  'HK HM HN HR HT HU ' +
  'ID IE IL IM IN IO IQ IR IS IT ' +
  'JE JM JO JP ' +
  'KE KG KH KI KM KN KP KR KW KY KZ ' +
  'LA LB LC LI LK LR LS LT LU LV LY ' +
  'MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ ' +
  'NA NC NE NF NG NI NL NO NP NR NU NZ ' +
  'OM ' +
  'PA PE PF PG PH PK PL PM PN PR PS PT PW PY ' +
  'QA ' +
  'RE RO RS RU RW ' +
  'SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ ' +
  'TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ ' +
  'UA UG UM US UY UZ ' +
  'VA VC VE VG VI VN VU ' +
  'WF WS ' +
  'YE YT ' +
  'ZA ZM ZW'
).split(' ');

/**
 * Codes outside ISO 3166-1 that Cloudflare's geolocation can report:
 * `T1` (Tor network, documented for `ip.src.country`), `XX` (no country information, the
 * code Cloudflare documents for its country header) and `XK` (Kosovo, the user-assigned
 * code geolocation databases use). Kept so that a "never matches" lint stays quiet on them.
 */
export const EXTRA_COUNTRY_CODES: readonly string[] = ['T1', 'XX', 'XK'];

/** Every value `ip.src.country` can take. */
export const COUNTRY_CODES: readonly string[] = [...ISO_COUNTRY_CODES, ...EXTRA_COUNTRY_CODES];

/**
 * Values of `cf.verified_bot_category` (the string values Cloudflare's verified-bot
 * category list gives; the list grows over time, so treat it as a hint).
 */
export const VERIFIED_BOT_CATEGORIES: readonly string[] = [
  'Academic Research',
  'Accessibility',
  'Advertising & Marketing',
  'Aggregator',
  'AI Assistant',
  'AI Crawler',
  'AI Search',
  'Archiver',
  'Feed Fetcher',
  'Monitoring & Analytics',
  'Page Preview',
  'Search Engine Crawler',
  'Search Engine Optimization',
  'Security',
  'Webhooks',
  'Other',
];

/** Classes of `cf.waf.score.class`, from most to least suspicious. */
export const WAF_SCORE_CLASSES: readonly string[] = ['attack', 'likely_attack', 'likely_clean', 'clean'];

/**
 * Non-empty values of `cf.response.error_type` (the field is `""` when the response is
 * not a Cloudflare-generated error).
 */
export const RESPONSE_ERROR_TYPES: readonly string[] = [
  'managed_challenge',
  'iuam',
  'legacy_challenge',
  'ip_ban',
  'waf',
  '5xx',
  '1xxx',
  'always_online',
  'country_challenge',
  'ratelimit',
];

/** TLS / SSL protocol names of `cf.tls_version`. */
export const TLS_VERSIONS: readonly string[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3', 'SSLv3'];

/** Personal-data categories of `cf.llm.prompt.pii_categories`. */
export const LLM_PII_CATEGORIES: readonly string[] = [
  'BANK_ACCOUNT',
  'CREDIT_CARD',
  'DATE_TIME',
  'DRIVER_LICENSE',
  'EMAIL_ADDRESS',
  'IP_ADDRESS',
  'LOCATION',
  'PASSPORT',
  'PERSON',
  'PHONE_NUMBER',
  'TAX_ID',
  'US_SSN',
  'URL',
];

/** Unsafe-topic categories of `cf.llm.prompt.unsafe_topic_categories`: `S1` … `S14`. */
export const LLM_UNSAFE_TOPIC_CATEGORIES: readonly string[] = Array.from(
  { length: 14 },
  (_, i) => `S${i + 1}`,
);

/** Per-object results of `cf.waf.content_scan.obj_results`. */
export const CONTENT_SCAN_RESULTS: readonly string[] = ['clean', 'suspicious', 'infected', 'not scanned'];

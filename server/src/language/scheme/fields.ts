/**
 * The fields of the HTTP scheme (reference rules-language §4.1–§4.11), and, separately,
 * the network-layer (Magic Firewall) fields of §4.12.
 *
 * Plans and phases are recorded only where the reference states a restriction; an absent
 * `plan` means every plan, an absent `phases` means every phase.
 */
import { parseType } from '../types';
import type { FieldDef, Phase } from './types';
import {
  CONTENT_SCAN_RESULTS,
  CONTINENT_CODES,
  COUNTRY_CODES,
  HTTP_METHODS,
  HTTP_VERSIONS,
  LLM_PII_CATEGORIES,
  LLM_UNSAFE_TOPIC_CATEGORIES,
  RESPONSE_ERROR_TYPES,
  TLS_VERSIONS,
  VERIFIED_BOT_CATEGORIES,
  WAF_SCORE_CLASSES,
} from './values';

type Extra = Omit<FieldDef, 'name' | 'type' | 'doc'>;

function field(name: string, type: string, doc: string, extra: Extra = {}): FieldDef {
  return { name, type: parseType(type), doc, ...extra };
}

/**
 * Phases that run once the response is known: response header transforms, custom error
 * rules, compression rules, sensitive data detection (response managed rulesets), log custom
 * fields, and cache response rules. Also a rate limiting rule's counting expression, but not
 * its expression (matched before the request goes on): CheckOptions.countingExpression.
 */
export const RESPONSE_PHASES: readonly Phase[] = [
  'http_response_headers_transform',
  'http_custom_errors',
  'http_response_compression',
  'http_response_firewall_managed',
  'http_log_custom_fields',
  'http_response_cache_settings',
];

/** The three Transform Rules phases: URL rewrite, request headers, response headers. */
export const TRANSFORM_PHASES: readonly Phase[] = [
  'http_request_transform',
  'http_request_late_transform',
  'http_response_headers_transform',
];

/** Where `cf.response.*` exists: response header transforms and custom error rules. */
const CF_RESPONSE_PHASES: readonly Phase[] = ['http_response_headers_transform', 'http_custom_errors'];

const RESPONSE: Extra = { phases: RESPONSE_PHASES };
const ENT: Extra = { plan: 'enterprise' };
const ENT_BM: Extra = { plan: 'enterprise', planNote: 'Bot Management add-on' };
const ENT_CONTENT_SCAN: Extra = { plan: 'enterprise', planNote: 'malicious uploads detection (content scanning) add-on' };
const ENT_AI: Extra = { plan: 'enterprise', planNote: 'AI Security for Apps (Firewall for AI)' };
const ENT_API_SHIELD: Extra = { plan: 'enterprise', planNote: 'API Shield add-on' };

const THIRD_PARTY = '(not in Cloudflare\'s field index; seen in third-party schemes)';

// ---------------------------------------------------------------------------------------
// §4.1 Request basics, URI, headers

const REQUEST_BASICS: FieldDef[] = [
  field('http.cookie', 'Bytes', 'The whole Cookie request header as one string.'),
  field('http.host', 'Bytes', 'Host name of the request as the client sent it (Origin Rules do not change it).'),
  field('http.referer', 'Bytes', 'The Referer request header.'),
  field('http.user_agent', 'Bytes', 'The User-Agent request header.'),
  field('http.x_forwarded_for', 'Bytes', 'The complete X-Forwarded-For request header.'),
  field('http.request.method', 'Bytes', 'HTTP method in upper case, such as "GET".', { values: HTTP_METHODS }),
  field('http.request.version', 'Bytes', 'HTTP protocol version, such as "HTTP/1.1" or "HTTP/3".', {
    values: HTTP_VERSIONS,
  }),
  field('http.request.full_uri', 'Bytes', 'Scheme, host, path and query string of the request (the #fragment is never included).'),
  field('http.request.uri', 'Bytes', 'Path and query string of the request.'),
  field('http.request.uri.path', 'Bytes', 'URL path of the request, after URL normalization when it is enabled.'),
  field(
    'http.request.uri.path.extension',
    'Bytes',
    'Lower-case file extension of the last path segment, without the dot; empty when there is none.',
  ),
  field('http.request.uri.query', 'Bytes', 'Query string of the request, without the leading "?".'),
  field('http.request.uri.args', 'Map<Array<Bytes>>', 'Query arguments by name; repeated names keep every value in order; nothing is decoded.'),
  field('http.request.uri.args.names', 'Array<Bytes>', 'Names of the query arguments, in the order they appear.'),
  field('http.request.uri.args.values', 'Array<Bytes>', 'Values of the query arguments, in the order they appear.'),
  field('http.request.cookies', 'Map<Array<Bytes>>', 'Cookies by name (names URL-decoded; values of repeated names are merged).', {
    plan: 'pro',
  }),
  field('http.request.headers', 'Map<Array<Bytes>>', 'Request headers by name; the names (map keys) are lower case, values are raw.'),
  field('http.request.headers.names', 'Array<Bytes>', 'Request header names in their original case and order (HTTP/2 names are always lower case).'),
  field('http.request.headers.values', 'Array<Bytes>', 'Request header values, in the same order as the names.'),
  field('http.request.headers.truncated', 'Bool', 'True when the request had too many headers, so the header fields may be incomplete.'),
  field(
    'http.request.accepted_languages',
    'Array<Bytes>',
    'Language tags of the Accept-Language header, highest preference first, without "*" (Transform Rules only).',
    { phases: TRANSFORM_PHASES },
  ),
  field('http.request.timestamp.sec', 'Int', 'Time the request was received, in seconds since the UNIX epoch.'),
  field('http.request.timestamp.msec', 'Int', 'Millisecond part (0 to 999) of the time the request was received.'),
  field('ssl', 'Bool', 'True when the client connection is encrypted (HTTPS).'),
];

// ---------------------------------------------------------------------------------------
// §4.2 Raw fields

const RAW_NOTE = 'as received, unaffected by URL normalization and by earlier rules';
const RAW_FIELDS: FieldDef[] = [
  field('raw.http.request.full_uri', 'Bytes', `Full request URI, ${RAW_NOTE}.`),
  field('raw.http.request.uri', 'Bytes', `Path and query string, ${RAW_NOTE}.`),
  field('raw.http.request.uri.path', 'Bytes', `URL path, ${RAW_NOTE}.`),
  field('raw.http.request.uri.path.extension', 'Bytes', `File extension of the URL path, ${RAW_NOTE}.`),
  field('raw.http.request.uri.query', 'Bytes', `Query string without "?", ${RAW_NOTE}.`),
  field('raw.http.request.uri.args', 'Map<Array<Bytes>>', `Query arguments by name, ${RAW_NOTE}.`),
  field('raw.http.request.uri.args.names', 'Array<Bytes>', `Query argument names in order, ${RAW_NOTE}.`),
  field('raw.http.request.uri.args.values', 'Array<Bytes>', `Query argument values in order, ${RAW_NOTE}.`),
  field('raw.http.response.headers', 'Map<Array<Bytes>>', 'Response headers by lower-case name, before any response header rule changed them.', RESPONSE),
  field('raw.http.response.headers.names', 'Array<Bytes>', 'Response header names, before any response header rule changed them.', RESPONSE),
  field('raw.http.response.headers.values', 'Array<Bytes>', 'Response header values, before any response header rule changed them.', RESPONSE),
];

// ---------------------------------------------------------------------------------------
// §4.3 Request body

const BODY_FIELDS: FieldDef[] = [
  field('http.request.body.raw', 'Bytes', 'Unparsed request body (may be cut off at the inspection limit; see http.request.body.truncated).', ENT),
  field('http.request.body.truncated', 'Bool', 'True when the body was larger than the inspection limit and the body fields hold only its start.', ENT),
  field('http.request.body.size', 'Int', 'Total size of the request body in bytes, which can exceed the inspected part.', ENT),
  field('http.request.body.form', 'Map<Array<Bytes>>', 'Fields of an application/x-www-form-urlencoded body by name.', ENT),
  field('http.request.body.form.names', 'Array<Bytes>', 'Names of the form fields of a URL-encoded body, in order.', ENT),
  field('http.request.body.form.values', 'Array<Bytes>', 'Values of the form fields of a URL-encoded body, in order.', ENT),
  field('http.request.body.mime', 'Bytes', 'Content type detected from the body bytes themselves, such as "image/jpeg".'),
  field('http.request.body.multipart', 'Map<Array<Bytes>>', 'Parts of a multipart body: part name to part values.', ENT),
  field('http.request.body.multipart.names', 'Array<Array<Bytes>>', 'Names of each part of a multipart body.', ENT),
  field('http.request.body.multipart.values', 'Array<Bytes>', 'Values of each part of a multipart body.', ENT),
  field('http.request.body.multipart.content_types', 'Array<Array<Bytes>>', 'Content-Type header values of each multipart part.', ENT),
  field('http.request.body.multipart.content_dispositions', 'Array<Array<Bytes>>', 'Content-Disposition header values of each multipart part.', ENT),
  field(
    'http.request.body.multipart.content_transfer_encodings',
    'Array<Array<Bytes>>',
    'Content-Transfer-Encoding header values of each multipart part.',
    ENT,
  ),
  field('http.request.body.multipart.filenames', 'Array<Array<Bytes>>', 'File names given in the Content-Disposition of each multipart part.', ENT),
];

// ---------------------------------------------------------------------------------------
// §4.4 Response fields

const RESPONSE_FIELDS: FieldDef[] = [
  field('http.response.code', 'Int', 'HTTP status code of the response.', RESPONSE),
  field('http.response.headers', 'Map<Array<Bytes>>', 'Response headers by name; the names (map keys) are lower case.', RESPONSE),
  field('http.response.headers.names', 'Array<Bytes>', 'Response header names, in order.', RESPONSE),
  field('http.response.headers.values', 'Array<Bytes>', 'Response header values, in the same order as the names.', RESPONSE),
  field(
    'http.response.content_type.media_type',
    'Bytes',
    'Lower-case media type of the response Content-Type (type/subtype and suffix, no parameters).',
    RESPONSE,
  ),
  field('cf.response.1xxx_code', 'Int', 'Cloudflare 1xxx error code of the response, or 0 when it is not such an error.', {
    phases: CF_RESPONSE_PHASES,
  }),
  field('cf.response.error_type', 'Bytes', 'Kind of error response Cloudflare generated, or "" for a regular response.', {
    phases: CF_RESPONSE_PHASES,
    values: RESPONSE_ERROR_TYPES,
  }),
  field('http.response.headers.truncated', 'Bool', `True when the response had too many headers to list them all ${THIRD_PARTY}.`, RESPONSE),
];

// ---------------------------------------------------------------------------------------
// §4.5 Client IP and geolocation (with the deprecated ip.geoip.* aliases)

const GEO_FIELDS: FieldDef[] = [
  field('ip.src', 'Ip', 'IP address of the client (IPv4 or IPv6).'),
  field('ip.src.lat', 'Bytes', 'Latitude of the client IP address, as a string.'),
  field('ip.src.lon', 'Bytes', 'Longitude of the client IP address, as a string.'),
  field('ip.src.city', 'Bytes', 'City of the client IP address.'),
  field('ip.src.postal_code', 'Bytes', 'Postal code of the client IP address.'),
  field('ip.src.metro_code', 'Bytes', 'Metro (DMA) code of the client IP address.'),
  field('ip.src.region', 'Bytes', 'Name of the region (state, province) of the client IP address.'),
  field('ip.src.region_code', 'Bytes', 'Code of the region of the client IP address, such as "TX".'),
  field(
    'ip.src.timezone.name',
    'Bytes',
    'Time zone name of the client IP address, such as "Europe/Paris" (rewrite expressions of Transform Rules only).',
    { phases: TRANSFORM_PHASES },
  ),
  field('ip.src.asnum', 'Int', 'Autonomous system (AS) number of the client IP address.'),
  field('ip.src.continent', 'Bytes', 'Continent code of the client IP address ("T1" for Tor).', { values: CONTINENT_CODES }),
  field('ip.src.country', 'Bytes', 'Upper-case ISO 3166-1 alpha-2 country code of the client IP address ("T1" for Tor).', {
    values: COUNTRY_CODES,
  }),
  field('ip.src.subdivision_1_iso_code', 'Bytes', 'ISO 3166-2 code of the first-level subdivision, such as "GB-ENG"; empty when unknown.', {
    plan: 'business',
  }),
  field('ip.src.subdivision_2_iso_code', 'Bytes', 'ISO 3166-2 code of the second-level subdivision; empty when unknown.', {
    plan: 'business',
  }),
  field('ip.src.is_in_european_union', 'Bool', 'True when the client IP address is located in a European Union country.', {
    plan: 'business',
  }),
];

/** The `ip.geoip.*` names that older rules use; each one is an alias of an `ip.src.*` field. */
const DEPRECATED_GEOIP: FieldDef[] = [
  'asnum',
  'continent',
  'country',
  'subdivision_1_iso_code',
  'subdivision_2_iso_code',
  'is_in_european_union',
].map((suffix) => {
  const target = GEO_FIELDS.find((f) => f.name === `ip.src.${suffix}`);
  if (!target) throw new Error(`no ip.src.${suffix}`);
  return {
    ...target,
    name: `ip.geoip.${suffix}`,
    doc: `Deprecated alias of ${target.name}. ${target.doc}`,
    deprecated: { replacement: target.name },
  };
});

/** Each deprecated `ip.geoip.*` name and the `ip.src.*` field it is another name for: a request's value under one is its value under the other. */
export const GEOIP_ALIASES: readonly (readonly [alias: string, field: string])[] = DEPRECATED_GEOIP.map((f) => [f.name, f.deprecated!.replacement!]);

// ---------------------------------------------------------------------------------------
// §4.6 Edge, connection, TLS

const EDGE_FIELDS: FieldDef[] = [
  field('cf.edge.server_ip', 'Ip', 'Cloudflare edge IP address the request arrived on (useful with BYOIP).'),
  field('cf.edge.server_port', 'Int', 'Port number of the edge server that received the request (1 to 65535).'),
  field('cf.edge.client_tcp', 'Bool', 'True when the client connected over TCP.'),
  field('cf.edge.l4.delivery_rate', 'Int', 'Estimated delivery rate of the client connection in bytes per second; 0 when unknown.'),
  field('cf.timings.client_tcp_rtt_msec', 'Int', 'Round-trip time to the client over TCP in milliseconds (0 for QUIC).'),
  field('cf.timings.client_quic_rtt_msec', 'Int', 'Round-trip time to the client over QUIC in milliseconds (0 for TCP).'),
  field('cf.timings.edge_msec', 'Int', 'Time the edge spent processing the request, in milliseconds.'),
  field('cf.timings.origin_ttfb_msec', 'Int', 'Time to first byte from the origin in milliseconds; 0 when served from cache.'),
  field('cf.timings.worker_msec', 'Int', 'Wall time a Worker spent on the request in milliseconds; 0 when no Worker ran.'),
  field('cf.hostname.metadata', 'Bytes', 'Custom metadata of the SSL for SaaS custom hostname, as a JSON string.'),
  field('cf.random_seed', 'Bytes', 'Random bytes generated for each request (the input of uuidv4).'),
  field('cf.ray_id', 'Bytes', 'Ray ID that identifies the request.'),
  field('cf.worker.upstream_zone', 'Bytes', 'Zone of the Worker that made this subrequest; empty when not sent by a Worker.'),
  field('cf.threat_score', 'Int', 'Legacy IP reputation score; it is now always 0.'),
  field('cf.tls_cipher', 'Bytes', 'Cipher suite negotiated with the client, such as "AES128-SHA256".'),
  field('cf.tls_version', 'Bytes', 'TLS protocol version negotiated with the client, such as "TLSv1.2".', { values: TLS_VERSIONS }),
  field('cf.tls_ciphers_sha1', 'Bytes', 'Base64 SHA-1 digest of the cipher suites the client offered.'),
  field('cf.tls_client_extensions_sha1', 'Bytes', 'Base64 SHA-1 digest of the TLS extensions the client sent (big-endian).'),
  field('cf.tls_client_extensions_sha1_le', 'Bytes', 'Base64 SHA-1 digest of the TLS extensions the client sent (little-endian).'),
  field('cf.tls_client_hello_length', 'Int', 'Length in bytes of the TLS ClientHello message.'),
  field('cf.tls_client_random', 'Bytes', 'Base64 of the 32 random bytes from the TLS ClientHello.'),
];

// ---------------------------------------------------------------------------------------
// §4.7 mTLS client certificate

const MTLS = (suffix: string, type: 'Bool' | 'Bytes', doc: string): FieldDef =>
  field(
    `cf.tls_client_auth.${suffix}`,
    type,
    `${doc} (mTLS; ${type === 'Bool' ? 'false' : 'empty'} without a client certificate).`,
  );

const MTLS_FIELDS: FieldDef[] = [
  MTLS('cert_presented', 'Bool', 'True when the client presented a certificate'),
  MTLS('cert_verified', 'Bool', 'True when the client certificate was verified against the configured CA'),
  MTLS('cert_revoked', 'Bool', 'True when the client certificate has been revoked'),
  MTLS('cert_rfc9440_too_large', 'Bool', 'True when the leaf certificate did not fit the RFC 9440 field size limit'),
  MTLS('cert_chain_rfc9440_too_large', 'Bool', 'True when the certificate chain did not fit the RFC 9440 field size limit'),
  MTLS('cert_issuer_dn', 'Bytes', 'Distinguished name of the certificate issuer'),
  MTLS('cert_subject_dn', 'Bytes', 'Distinguished name of the certificate subject'),
  MTLS('cert_issuer_dn_rfc2253', 'Bytes', 'Issuer distinguished name in RFC 2253 format'),
  MTLS('cert_subject_dn_rfc2253', 'Bytes', 'Subject distinguished name in RFC 2253 format'),
  MTLS('cert_issuer_dn_legacy', 'Bytes', 'Issuer distinguished name in the legacy format'),
  MTLS('cert_subject_dn_legacy', 'Bytes', 'Subject distinguished name in the legacy format'),
  MTLS('cert_serial', 'Bytes', 'Serial number of the client certificate'),
  MTLS('cert_issuer_serial', 'Bytes', 'Serial number of the issuer certificate'),
  MTLS('cert_fingerprint_sha256', 'Bytes', 'SHA-256 fingerprint of the client certificate'),
  MTLS('cert_fingerprint_sha1', 'Bytes', 'SHA-1 fingerprint of the client certificate'),
  MTLS('cert_not_before', 'Bytes', 'Start of the certificate validity period'),
  MTLS('cert_not_after', 'Bytes', 'End of the certificate validity period'),
  MTLS('cert_ski', 'Bytes', 'Subject key identifier of the client certificate'),
  MTLS('cert_issuer_ski', 'Bytes', 'Subject key identifier of the issuer certificate'),
  MTLS('cert_rfc9440', 'Bytes', 'Leaf certificate encoded as an RFC 9440 byte sequence (up to 10 KiB)'),
  MTLS('cert_chain_rfc9440', 'Bytes', 'Certificate chain encoded as RFC 9440 byte sequences (up to 16 KiB)'),
];

// ---------------------------------------------------------------------------------------
// §4.8 Bots

const BOT_FIELDS: FieldDef[] = [
  field('cf.client.bot', 'Bool', 'True when the request comes from a known good (verified) bot.'),
  field('cf.verified_bot_category', 'Bytes', 'Category of the verified bot that sent the request, such as "Search Engine Crawler".', {
    values: VERIFIED_BOT_CATEGORIES,
  }),
  field('cf.bot_management.verified_bot', 'Bool', 'True when the request comes from a known good bot (same as cf.client.bot).', ENT_BM),
  field('cf.bot_management.score', 'Int', 'Bot score from 1 (almost certainly automated) to 99 (almost certainly human).', ENT_BM),
  field('cf.bot_management.static_resource', 'Bool', 'True when the request is for a static resource.', ENT_BM),
  field('cf.bot_management.ja3_hash', 'Bytes', 'JA3 fingerprint of the client TLS handshake.', ENT_BM),
  field('cf.bot_management.ja4', 'Bytes', 'JA4 fingerprint of the client TLS handshake.', ENT_BM),
  field('cf.bot_management.js_detection.passed', 'Bool', 'True when the client passed the JavaScript detection check.', ENT_BM),
  field('cf.bot_management.detection_ids', 'Array<Int>', 'IDs of the bot detections that matched the request.', ENT_BM),
  field('cf.bot_management.corporate_proxy', 'Bool', 'True when the request comes from a known corporate proxy.', ENT_BM),
  field('cf.bot_management.signed_agent', 'Bool', 'True when the request comes from a signed agent.', ENT_BM),
];

// ---------------------------------------------------------------------------------------
// §4.9 WAF detections

const LEAKED = 'leaked credentials detection';
const WAF_FIELDS: FieldDef[] = [
  field('cf.waf.score', 'Int', 'WAF attack score from 1 (likely attack) to 99 (likely clean); 100 when not scored.', ENT),
  field('cf.waf.score.sqli', 'Int', 'WAF attack score for SQL injection (1 to 99; 100 when not scored).', ENT),
  field('cf.waf.score.xss', 'Int', 'WAF attack score for cross-site scripting (1 to 99; 100 when not scored).', ENT),
  field('cf.waf.score.rce', 'Int', 'WAF attack score for remote code execution (1 to 99; 100 when not scored).', ENT),
  field('cf.waf.score.class', 'Bytes', 'Class of the WAF attack score: attack, likely_attack, likely_clean or clean.', {
    plan: 'business',
    values: WAF_SCORE_CLASSES,
  }),
  field('cf.waf.auth_detected', 'Bool', 'True when the request carries authentication credentials.', { ...ENT, planNote: LEAKED }),
  field('cf.waf.credential_check.password_leaked', 'Bool', 'True when the password in the request appears in a known data breach.', {
    planNote: `requires ${LEAKED}`,
  }),
  field('cf.waf.credential_check.username_leaked', 'Bool', 'True when the username in the request appears in a known data breach.', {
    ...ENT,
    planNote: LEAKED,
  }),
  field(
    'cf.waf.credential_check.username_and_password_leaked',
    'Bool',
    'True when the username and password pair in the request appears in a known data breach.',
    { plan: 'pro', planNote: LEAKED },
  ),
  field(
    'cf.waf.credential_check.username_password_similar',
    'Bool',
    'True when a similar username and password pair appears in a known data breach.',
    { ...ENT, planNote: LEAKED },
  ),
  field('cf.waf.content_scan.has_obj', 'Bool', 'True when the request contains at least one content object (such as an uploaded file).', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.has_malicious_obj', 'Bool', 'True when the request contains at least one malicious content object.', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.num_malicious_obj', 'Int', 'Number of malicious content objects found in the request.', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.has_failed', 'Bool', 'True when scanning at least one content object failed.', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.num_obj', 'Int', 'Number of content objects found in the request.', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.obj_sizes', 'Array<Int>', 'Size in bytes of each content object.', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.obj_types', 'Array<Bytes>', 'Detected type of each content object.', ENT_CONTENT_SCAN),
  field('cf.waf.content_scan.obj_results', 'Array<Bytes>', 'Scan result of each content object.', {
    ...ENT_CONTENT_SCAN,
    values: CONTENT_SCAN_RESULTS,
  }),
  field('cf.llm.prompt.detected', 'Bool', 'True when the request contains a prompt for a large language model.', ENT_AI),
  field('cf.llm.prompt.pii_detected', 'Bool', 'True when the LLM prompt contains personal information.', ENT_AI),
  field('cf.llm.prompt.pii_categories', 'Array<Bytes>', 'Categories of personal information found in the LLM prompt.', {
    ...ENT_AI,
    values: LLM_PII_CATEGORIES,
  }),
  field('cf.llm.prompt.unsafe_topic_detected', 'Bool', 'True when the LLM prompt touches an unsafe topic.', ENT_AI),
  field('cf.llm.prompt.unsafe_topic_categories', 'Array<Bytes>', 'Unsafe topic categories (S1 to S14) found in the LLM prompt.', {
    ...ENT_AI,
    values: LLM_UNSAFE_TOPIC_CATEGORIES,
  }),
  field('cf.llm.prompt.injection_score', 'Int', 'Prompt injection score from 1 (likely injection) to 99; 100 when not scored.', ENT_AI),
  field('cf.llm.prompt.token_count', 'Int', 'Estimated number of tokens in the LLM prompt.', ENT_AI),
  field('cf.llm.prompt.custom_topic_categories', 'Map<Int>', 'Score (1 to 99) of the LLM prompt for each custom topic label.', ENT_AI),
];

// ---------------------------------------------------------------------------------------
// §4.10 API Shield, schema validation, JWT claims

const JWT = 'http.request.jwt.claims';

function jwtClaim(claim: string, what: string, valueType: 'Bytes' | 'Int', note = ''): FieldDef[] {
  const suffix = note ? ` ${note}` : '';
  return [
    field(`${JWT}.${claim}`, `Map<Array<${valueType}>>`, `${what} of valid JWTs, keyed by token configuration ID${suffix}.`, ENT_API_SHIELD),
    field(`${JWT}.${claim}.names`, 'Array<Bytes>', `Token configuration IDs of the ${what} values${suffix}.`, ENT_API_SHIELD),
    field(`${JWT}.${claim}.values`, `Array<${valueType}>`, `${what} values of valid JWTs${suffix}.`, ENT_API_SHIELD),
  ];
}

const API_SHIELD_FIELDS: FieldDef[] = [
  field('cf.api_gateway.auth_id_present', 'Bool', 'True when the request carries the session identifier API Shield is configured to look for.', ENT_API_SHIELD),
  field('cf.api_gateway.request_violates_schema', 'Bool', 'True when the request does not conform to the API schema (schema validation).'),
  field('cf.api_gateway.fallthrough_detected', 'Bool', 'True when the request matches no endpoint saved in API Shield endpoint management.'),
  field('cf.schema_validation.learned.violated', 'Bool', 'True when the request violates a schema learned by API Shield.'),
  field('cf.schema_validation.uploaded.violated', 'Bool', 'True when the request violates an uploaded API schema.'),
  ...jwtClaim('aud', 'Audience (aud) claims', 'Bytes'),
  ...jwtClaim('iss', 'Issuer (iss) claims', 'Bytes'),
  ...jwtClaim('jti', 'JWT ID (jti) claims', 'Bytes'),
  ...jwtClaim('sub', 'Subject (sub) claims', 'Bytes'),
  ...jwtClaim('iat.sec', 'Issued-at (iat) times in UNIX seconds', 'Int'),
  ...jwtClaim('nbf.sec', 'Not-before (nbf) times in UNIX seconds', 'Int'),
  ...jwtClaim('exp.sec', 'Expiration (exp) times in UNIX seconds', 'Int', THIRD_PARTY),
];

// ---------------------------------------------------------------------------------------
// §4.11 Pseudo-field

const PSEUDO_FIELDS: FieldDef[] = [
  field('true', 'Bool', 'Always true: as the whole expression it matches every request.'),
];

/** Every field of the HTTP scheme. */
export const FIELDS: readonly FieldDef[] = [
  ...REQUEST_BASICS,
  ...RAW_FIELDS,
  ...BODY_FIELDS,
  ...RESPONSE_FIELDS,
  ...GEO_FIELDS,
  ...DEPRECATED_GEOIP,
  ...EDGE_FIELDS,
  ...MTLS_FIELDS,
  ...BOT_FIELDS,
  ...WAF_FIELDS,
  ...API_SHIELD_FIELDS,
  ...PSEUDO_FIELDS,
];

// ---------------------------------------------------------------------------------------
// §4.12 Network-layer scheme (Magic Firewall / Cloud Network Firewall): not part of the
// HTTP scheme; kept for a separate scheme.

const TCP_FLAG = (flag: string, what: string): FieldDef => field(`tcp.flags.${flag}`, 'Bool', `True when the TCP ${what} flag is set.`);

export const MAGIC_FIREWALL_FIELDS: readonly FieldDef[] = [
  field('cf.colo.name', 'Bytes', 'Name of the Cloudflare data center that received the packet.'),
  field('cf.colo.region', 'Bytes', 'Region of the Cloudflare data center that received the packet.'),
  field('icmp', 'Bytes', 'Raw ICMP header and payload of the packet.'),
  field('icmp.type', 'Int', 'ICMP message type.'),
  field('icmp.code', 'Int', 'ICMP message code.'),
  field('ip', 'Bytes', 'Raw IP header of the packet.'),
  field('ip.dst', 'Ip', 'Destination IP address of the packet.'),
  field('ip.dst.country', 'Bytes', 'Country code of the destination IP address.', { values: COUNTRY_CODES }),
  field('ip.src', 'Ip', 'Source IP address of the packet.'),
  field('ip.src.country', 'Bytes', 'Country code of the source IP address.', { values: COUNTRY_CODES }),
  field('ip.geoip.country', 'Bytes', 'Deprecated: matches the country of the source or of the destination address.', {
    values: COUNTRY_CODES,
    deprecated: { replacement: 'ip.src.country' },
  }),
  field('ip.hdr_len', 'Int', 'Length of the IP header.'),
  field('ip.len', 'Int', 'Total length of the IP packet.'),
  field('ip.opt.type', 'Int', 'Type of the first IP option.'),
  field('ip.proto', 'Bytes', 'Transport protocol name in lower case, such as "tcp" or "icmp".'),
  field('ip.ttl', 'Int', 'Time to live (hop limit) of the packet.'),
  field('sip', 'Bool', 'True when the packet is SIP traffic.'),
  field('tcp', 'Bytes', 'Raw TCP header of the packet.'),
  field('tcp.flags', 'Int', 'TCP flags as one integer.'),
  TCP_FLAG('ack', 'ACK'),
  TCP_FLAG('cwr', 'CWR'),
  TCP_FLAG('ecn', 'ECE (ECN echo)'),
  TCP_FLAG('fin', 'FIN'),
  TCP_FLAG('push', 'PSH'),
  TCP_FLAG('reset', 'RST'),
  TCP_FLAG('syn', 'SYN'),
  TCP_FLAG('urg', 'URG'),
  field('tcp.srcport', 'Int', 'TCP source port.'),
  field('tcp.dstport', 'Int', 'TCP destination port.'),
  field('udp', 'Bytes', 'Raw UDP header of the packet.'),
  field('udp.srcport', 'Int', 'UDP source port.'),
  field('udp.dstport', 'Int', 'UDP destination port.'),
];


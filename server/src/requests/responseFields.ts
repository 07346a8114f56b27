/**
 * An origin's answer as field values (reference rules-language §4.4), in the form
 * fields.ts gives a request's (before typing): what a rate limiting rule's
 * `counting_expression` reads once the answer's head is known (the WAF proxy, after
 * forwarding). Nothing changes response headers here, so the `raw.` fields are the same.
 */
import { asciiLower } from '../language/bytes';
import { headerFields, headerValues } from './fields';

export interface ResponseHead {
  readonly status: number;
  /** Names and values alternating, as Node's `rawHeaders`. */
  readonly rawHeaders: readonly string[];
}

export function responseFields(head: ResponseHead): Record<string, unknown> {
  // Node gives header values as bytes (binary strings), as headerFields takes them.
  const pairs = headerPairs(head.rawHeaders);
  const h = headerFields(pairs);
  const contentType = headerValues(pairs, 'content-type')[0] ?? '';
  return {
    'http.response.code': head.status,
    'http.response.headers': h.map,
    'http.response.headers.names': h.names,
    'http.response.headers.values': h.values,
    'http.response.headers.truncated': false,
    'http.response.content_type.media_type': asciiLower(contentType.split(';')[0]!.trim()),
    'raw.http.response.headers': h.map,
    'raw.http.response.headers.names': h.names,
    'raw.http.response.headers.values': h.values,
  };
}

/** The first value of header `name` (lower case) in `rawHeaders`. */
export function firstHeader(rawHeaders: readonly string[], name: string): string | undefined {
  return headerValues(headerPairs(rawHeaders), name)[0];
}

/** Node's alternating `rawHeaders` as name/value pairs. */
function headerPairs(rawHeaders: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) pairs.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
  return pairs;
}

/**
 * An origin's answer as field values (reference rules-language §4.4), in the form
 * fields.ts gives a request's (before typing): what a rate limiting rule's
 * `counting_expression` reads once the answer's head is known (the WAF proxy, after
 * forwarding). Nothing changes response headers here, so the `raw.` fields are the same.
 */
import { asciiLower } from '../language/bytes';
import { emptyMap } from './fieldBytes';

export interface ResponseHead {
  readonly status: number;
  /** Names and values alternating, as Node's `rawHeaders`. */
  readonly rawHeaders: readonly string[];
}

export function responseFields(head: ResponseHead): Record<string, unknown> {
  const names: string[] = [];
  const values: string[] = [];
  const map = emptyMap();
  for (let i = 0; i + 1 < head.rawHeaders.length; i += 2) {
    const name = head.rawHeaders[i]!;
    const value = head.rawHeaders[i + 1]!;
    names.push(name);
    values.push(value);
    (map[asciiLower(name)] ??= []).push(value);
  }
  const contentType = String(map['content-type']?.[0] ?? '');
  return {
    'http.response.code': head.status,
    'http.response.headers': map,
    'http.response.headers.names': names,
    'http.response.headers.values': values,
    'http.response.headers.truncated': false,
    'http.response.content_type.media_type': asciiLower(contentType.split(';')[0]!.trim()),
    'raw.http.response.headers': map,
    'raw.http.response.headers.names': names,
    'raw.http.response.headers.values': values,
  };
}

/** The first value of header `name` (lower case) in `rawHeaders`. */
export function firstHeader(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (asciiLower(rawHeaders[i]!) === name) return rawHeaders[i + 1];
  return undefined;
}

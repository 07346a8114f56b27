/**
 * Sample HTTP requests, from REST-Client-style `.http` files or CRS ftw YAML, before
 * they become field values for the engine.
 */

export interface SampleRequest {
  /** A name to show: `### name` in .http files, the ftw test title and stage. */
  readonly name?: string;
  readonly method: string;
  /** As written: absolute (`https://host/path?q`) or origin-form (`/path?q`, host from the Host header). */
  readonly url: string;
  /** `HTTP/1.1` when not written. */
  readonly httpVersion: string;
  /** In order, names as written (case kept). */
  readonly headers: readonly (readonly [string, string])[];
  /** Body bytes as a binary string (one code unit per byte), or undefined. */
  readonly body?: string;
  /**
   * The body's whole size in bytes when `body` holds only its first bytes (read up to the
   * inspection limit from a file or a stream, see body.ts); else the size is body.length.
   */
  readonly bodySize?: number;
  /**
   * A body that names files (`< ./upload.bin` lines in a `.http` file), before an adapter
   * reads them (body.ts `withBodyFiles`, which sets `body` and `bodySize`): text as binary
   * strings and file references in order.
   */
  readonly bodySegments?: readonly BodySegment[];
  /** Edge fields from metadata comments (`# @ip.src 203.0.113.9`): field name -> text. */
  readonly meta: Readonly<Record<string, string>>;
  /**
   * True when the request is exactly what goes on the wire (ftw tests). Otherwise it is what a
   * client such as REST Client is asked to send, and the client adds a `Host` header from an
   * absolute URL when none is written (seen by the CRS rules' REQUEST_HEADERS).
   */
  readonly wire?: boolean;
  /**
   * True when the header values are the bytes as received (binary strings, one code unit per
   * byte: a live request's), not text: a value that is not UTF-8 keeps its exact bytes.
   */
  readonly headerBytes?: boolean;
  /** Where the request starts and ends in its source (UTF-16 offsets), for CodeLens and errors. */
  readonly source?: { readonly start: number; readonly end: number; readonly line: number };
}

/** A piece of a body that names files: text (binary string), or a file with its path as written and 0-based line. */
export type BodySegment = string | { readonly file: string; readonly line: number };

export interface RequestProblem {
  /** 0-based line in the source. */
  readonly line: number;
  readonly message: string;
}

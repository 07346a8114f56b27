/** What an HTTP/1.1 server reads from a request on the wire, for the ftw readers. */

/** The body a server reads after the headers (RFC 9112 §6.3). */
export function messageBody(headers: readonly (readonly [string, string])[], wire: string): string {
  const values = (name: string): string[] => headers.filter(([k]) => k.toLowerCase() === name).map(([, v]) => v.trim());
  const te = values('transfer-encoding').join(',');
  if (te !== '') {
    if (/(^|,)\s*chunked\s*$/i.test(te)) return dechunk(wire) ?? wire;
    return wire; // another coding: read to the end of the connection
  }
  const cl = [...new Set(values('content-length'))];
  if (cl.length === 0) return '';
  if (cl.length === 1 && /^\d+$/.test(cl[0])) return wire.slice(0, Number(cl[0]));
  return wire; // invalid or conflicting Content-Length: keep what was sent
}

/** Decodes a chunked body; undefined when it is malformed. Trailers are ignored. */
function dechunk(wire: string): string | undefined {
  let pos = 0;
  let out = '';
  for (;;) {
    const eol = wire.indexOf('\n', pos);
    if (eol < 0) return undefined;
    const sizeText = wire.slice(pos, eol).replace(/\r$/, '').split(';')[0].trim();
    if (!/^[0-9A-Fa-f]+$/.test(sizeText)) return undefined;
    const size = parseInt(sizeText, 16);
    pos = eol + 1;
    if (size === 0) return out;
    if (pos + size > wire.length) return undefined;
    out += wire.slice(pos, pos + size);
    pos += size;
    if (wire.startsWith('\r\n', pos)) pos += 2;
    else if (wire.startsWith('\n', pos)) pos += 1;
    else return undefined;
  }
}

/**
 * A form component escaped as Python's `quote_plus` and Go's `url.QueryEscape` both do (a
 * binary string in, UTF-8 bytes): `A-Za-z0-9_.-~` kept, space as `+`, the rest `%XX`.
 */
export function formQuote(b: string): string {
  let out = '';
  for (let i = 0; i < b.length; i++) {
    const c = b.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f || c === 0x2e || c === 0x2d || c === 0x7e) out += b[i];
    else if (c === 0x20) out += '+';
    else out += '%' + c.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

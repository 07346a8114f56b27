/**
 * "Binary strings": a JS string holding one code unit 0..255 per byte (see ir.ts), so
 * that Bytes values compare, sort and search exactly like the engine's byte slices.
 */

const encoder = new TextEncoder();
// fatal: reject invalid UTF-8 instead of substituting U+FFFD; ignoreBOM: keep a
// leading EF BB BF as U+FEFF (the engine does not strip it).
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** True when every code unit is ASCII, the common case that needs no conversion. */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Packs bytes into a binary string. */
export function bytesToBinary(bytes: Uint8Array): string {
  let out = '';
  // Chunked so that fromCharCode never receives too many arguments.
  for (let i = 0; i < bytes.length; i += 0x2000) {
    out += String.fromCharCode.apply(null, Array.from(bytes.subarray(i, i + 0x2000)));
  }
  return out;
}

/** Unpacks a binary string into bytes (code units above 255 are truncated). */
export function binaryToBytes(b: string): Uint8Array {
  const out = new Uint8Array(b.length);
  for (let i = 0; i < b.length; i++) out[i] = b.charCodeAt(i) & 0xff;
  return out;
}

/** UTF-8 encodes a JS string; lone surrogates become U+FFFD (EF BF BD). */
export function utf8ToBinary(s: string): string {
  return isAscii(s) ? s : bytesToBinary(encoder.encode(s));
}

/** Decodes a binary string as UTF-8, or undefined when it is not valid UTF-8. */
export function binaryToUtf8(b: string): string | undefined {
  if (isAscii(b)) return b;
  try {
    return decoder.decode(binaryToBytes(b));
  } catch {
    return undefined;
  }
}

/** For messages and hovers: the text when valid UTF-8, else printable ASCII with `\xHH` escapes. */
export function binaryToDisplay(b: string): string {
  const text = binaryToUtf8(b);
  if (text !== undefined) return text;
  let out = '';
  for (let i = 0; i < b.length; i++) {
    const c = b.charCodeAt(i);
    out += c >= 0x20 && c < 0x7f ? b[i] : '\\x' + c.toString(16).padStart(2, '0');
  }
  return out;
}

/**
 * Header parameters and multipart bodies (RFC 7578 / RFC 2046), on binary strings (one code
 * unit per byte): what the body fields and ModSecurity's multipart variables are read from.
 */
import { asciiLower } from '../language/bytes';
import { percentDecode } from './normalize';

/** The `; name=value` parameters of a header value, names lower-cased, quoted strings unescaped. */
export function headerParams(value: string): [string, string][] {
  const out: [string, string][] = [];
  let i = value.indexOf(';');
  if (i < 0) return out;
  while (i < value.length) {
    i++; // past ';'
    while (i < value.length && (value[i] === ' ' || value[i] === '\t')) i++;
    let name = '';
    while (i < value.length && value[i] !== '=' && value[i] !== ';') name += value[i++];
    name = asciiLower(name.trim());
    let v = '';
    if (value[i] === '=') {
      i++;
      while (i < value.length && (value[i] === ' ' || value[i] === '\t')) i++;
      if (value[i] === '"') {
        i++;
        while (i < value.length && value[i] !== '"') {
          if (value[i] === '\\' && i + 1 < value.length) i++;
          v += value[i++];
        }
        i++; // past the closing quote
        while (i < value.length && value[i] !== ';') i++;
      } else {
        while (i < value.length && value[i] !== ';') v += value[i++];
        v = v.trim();
      }
    }
    if (name !== '') out.push([name, v]);
  }
  return out;
}

export interface MultipartPart {
  readonly names: string[];
  readonly filenames: string[];
  readonly contentTypes: string[];
  readonly dispositions: string[];
  readonly transferEncodings: string[];
  /** The part's header lines as `Name: value` (folded lines joined). */
  readonly headerLines: string[];
  readonly value: string;
}

export interface Multipart {
  readonly parts: MultipartPart[];
  /**
   * Lines that begin with `--boundary` but are no delimiter (other text follows it on the
   * line): content, as RFC 2046 says, but a parser that took them for delimiters would see
   * other parts than the rules do, so they count as a strict error.
   */
  readonly lookalikes: number;
}

/**
 * Parses a multipart body (RFC 7578 / RFC 2046): parts between delimiter lines, each with
 * header lines, an empty line and the content. A delimiter line is `--boundary` at the start
 * of a line followed only by spaces or tabs before the line end (or by `--`: the close
 * delimiter); a line that merely begins with `--boundary` is content. Lenient otherwise: LF
 * line ends are accepted, a preamble is skipped, a missing close delimiter ends the last part
 * at the end of the body, and a part without an empty line is all headers.
 */
export function parseMultipart(body: string, boundary: string): Multipart {
  const delimiter = '--' + boundary;
  const parts: MultipartPart[] = [];
  const seen = { lookalikes: 0 };
  const atStart = body.startsWith(delimiter);
  if (atStart && !delimiterKind(body, 0, delimiter)) seen.lookalikes++;
  let pos = atStart && delimiterKind(body, 0, delimiter) ? 0 : (nextDelimiter(body, delimiter, 0, seen)?.at ?? -1);
  while (pos >= 0) {
    if (delimiterKind(body, pos, delimiter) === 'close') break;
    const eol = body.indexOf('\n', pos + delimiter.length);
    if (eol < 0) break;
    const p = eol + 1;
    const next = nextDelimiter(body, delimiter, p, seen);
    const content = body.slice(p, next ? next.end : body.length);
    parts.push(parsePart(content));
    pos = next ? next.at : -1;
  }
  return { parts, lookalikes: seen.lookalikes };
}

/** Whether `--boundary` at `at` is a delimiter line, and which (RFC 2046 §5.1.1: transport padding, then the line end). */
function delimiterKind(body: string, at: number, delimiter: string): 'open' | 'close' | undefined {
  let p = at + delimiter.length;
  if (body.startsWith('--', p)) return 'close';
  while (body[p] === ' ' || body[p] === '\t') p++;
  return p >= body.length || body[p] === '\n' || (body[p] === '\r' && (p + 1 >= body.length || body[p + 1] === '\n')) ? 'open' : undefined;
}

/**
 * The next delimiter line whose content could start at `from`: `at` is the index of its
 * `--`, `end` where the content before it ends (the line break before it is not content).
 * Look-alike lines passed over are counted in `seen`.
 */
function nextDelimiter(body: string, delimiter: string, from: number, seen: { lookalikes: number }): { at: number; end: number } | undefined {
  let search = Math.max(from - 1, 0);
  for (;;) {
    const lf = body.indexOf('\n' + delimiter, search);
    if (lf < 0) return undefined;
    if (delimiterKind(body, lf + 1, delimiter)) {
      const end = lf > from && body[lf - 1] === '\r' ? lf - 1 : Math.max(lf, from);
      return { at: lf + 1, end };
    }
    seen.lookalikes++;
    search = lf + 1;
  }
}

function parsePart(part: string): MultipartPart {
  const crlf = part.indexOf('\r\n\r\n');
  const lf = part.indexOf('\n\n');
  let headEnd: number;
  let bodyStart: number;
  if (part.startsWith('\r\n')) [headEnd, bodyStart] = [0, 2];
  else if (part.startsWith('\n')) [headEnd, bodyStart] = [0, 1];
  else if (crlf >= 0 && (lf < 0 || crlf < lf)) [headEnd, bodyStart] = [crlf, crlf + 4];
  else if (lf >= 0) [headEnd, bodyStart] = [lf, lf + 2];
  else [headEnd, bodyStart] = [part.length, part.length];
  const result: MultipartPart = { names: [], filenames: [], contentTypes: [], dispositions: [], transferEncodings: [], headerLines: [], value: part.slice(bodyStart) };
  for (const [name, value] of headerLines(part.slice(0, headEnd))) {
    result.headerLines.push(`${name}: ${value}`);
    const n = asciiLower(name);
    if (n === 'content-disposition') {
      result.dispositions.push(value);
      for (const [pn, pv] of headerParams(value)) {
        if (pn === 'name') result.names.push(pv);
        else if (pn === 'filename') result.filenames.push(pv);
        else if (pn === 'filename*') result.filenames.push(decodeExtValue(pv));
      }
    } else if (n === 'content-type') result.contentTypes.push(value);
    else if (n === 'content-transfer-encoding') result.transferEncodings.push(value);
  }
  return result;
}

/** RFC 8187 `charset'lang'pct-encoded` -> the decoded bytes (the charset is not applied). */
function decodeExtValue(v: string): string {
  const m = /^[^']*'[^']*'(.*)$/s.exec(v);
  return percentDecode(m ? m[1] : v);
}

/** `Name: value` lines of a header block, with obsolete line folding joined; lines without a colon are skipped. */
export function headerLines(head: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of head.split(/\r?\n/)) {
    if (line === '') continue;
    if ((line[0] === ' ' || line[0] === '\t') && out.length > 0) {
      const last = out[out.length - 1];
      last[1] = (last[1] + ' ' + line.trim()).trim();
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    out.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return out;
}

/** `http.request.body.mime`: the media type of a body sniffed from its bytes. */
import { binaryToUtf8 } from '../language/bytes';
import { parseJsonBody } from './jsonBody';

/**
 * The media type of a body from its first bytes: common image, audio, video, archive and
 * document signatures, then HTML, XML and JSON text, then `text/plain` for other UTF-8 text
 * without control characters, else `application/octet-stream`; "" for an empty body.
 * Parameters (charset) are never added, as in the docs' example values.
 */
export function sniffMime(body: string): string {
  if (body.length === 0) return '';
  const at = (i: number, s: string): boolean => body.startsWith(s, i);
  if (at(0, '\xff\xd8\xff')) return 'image/jpeg';
  if (at(0, '\x89PNG\r\n\x1a\n')) return 'image/png';
  if (at(0, 'GIF87a') || at(0, 'GIF89a')) return 'image/gif';
  if (at(0, 'II*\x00') || at(0, 'MM\x00*')) return 'image/tiff';
  if (at(0, 'RIFF') && at(8, 'WEBP')) return 'image/webp';
  if (at(0, 'RIFF') && at(8, 'WAVE')) return 'audio/wav';
  if (at(0, 'RIFF') && at(8, 'AVI ')) return 'video/x-msvideo';
  if (at(0, 'BM') && body.length >= 14) return 'image/bmp';
  if (at(0, '\x00\x00\x01\x00')) return 'image/x-icon';
  if (at(0, '%PDF-')) return 'application/pdf';
  if (at(0, 'PK\x03\x04')) return 'application/zip';
  if (at(0, '\x1f\x8b\x08')) return 'application/gzip';
  if (at(0, '7z\xbc\xaf\x27\x1c')) return 'application/x-7z-compressed';
  if (at(0, 'Rar!\x1a\x07')) return 'application/vnd.rar';
  if (at(0, 'OggS')) return 'audio/ogg';
  if (at(0, 'fLaC')) return 'audio/flac';
  if (at(0, 'ID3') || /^\xff[\xe2-\xe7\xf2-\xf7\xfa-\xff]/.test(body)) return 'audio/mpeg';
  if (at(4, 'ftyp')) return 'video/mp4';
  if (at(0, '\x1aE\xdf\xa3')) return 'video/webm';
  if (at(0, '\x00asm')) return 'application/wasm';

  const text = binaryToUtf8(body.startsWith('\xef\xbb\xbf') ? body.slice(3) : body);
  if (text === undefined) return 'application/octet-stream';
  const start = text.trimStart();
  const lower = start.slice(0, 64).toLowerCase();
  if (/^<(!doctype html|html|head|body|script|iframe|h1|div|font|table|a|style|title|b|br|p)[ >]/.test(lower) || lower.startsWith('<!--')) return 'text/html';
  if (lower.startsWith('<?xml')) return 'text/xml';
  if ((start.startsWith('{') || start.startsWith('[')) && isJson(text)) return 'application/json';
  if (start.startsWith('%!PS-Adobe-')) return 'application/postscript';
  if (/[\x00-\x08\x0b\x0e-\x1a\x1c-\x1f\x7f]/.test(text)) return 'application/octet-stream';
  return 'text/plain';
}

function isJson(text: string): boolean {
  return parseJsonBody(text) !== undefined;
}

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sniffMime } from '../../../server/src/requests/sniff';

const MIME: readonly [string, string][] = [
  ['', ''],
  ['\xff\xd8\xff\xe0\x00\x10JFIF', 'image/jpeg'],
  ['\x89PNG\r\n\x1a\n\x00', 'image/png'],
  ['GIF89a\x01\x00', 'image/gif'],
  ['RIFF\x00\x00\x00\x00WEBPVP8 ', 'image/webp'],
  ['RIFF\x00\x00\x00\x00WAVEfmt ', 'audio/wav'],
  ['%PDF-1.7\n', 'application/pdf'],
  ['PK\x03\x04\x14\x00', 'application/zip'],
  ['\x1f\x8b\x08\x00', 'application/gzip'],
  ['ID3\x04\x00', 'audio/mpeg'],
  ['\x00\x00\x00\x18ftypmp42', 'video/mp4'],
  ['OggS\x00\x02', 'audio/ogg'],
  ['  <!DOCTYPE html><html>', 'text/html'],
  ['<html>', 'text/html'],
  ['<?xml version="1.0"?><a/>', 'text/xml'],
  [' {"a": [1, 2]}\n', 'application/json'],
  ['[1,2', 'text/plain'],
  ['\xef\xbb\xbf{"a":1}', 'application/json'],
  ['user=admin&pass=x', 'text/plain'],
  ['caf\xc3\xa9\r\n\ttab', 'text/plain'],
  ['a\x00b', 'application/octet-stream'],
  ['\xac\xed\x00\x05', 'application/octet-stream'],
];
for (const [body, mime] of MIME) test(`sniffMime ${JSON.stringify(body).slice(0, 30)}`, () => assert.equal(sniffMime(body), mime));

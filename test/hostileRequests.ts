// Hostile sample requests for the cost-linear-in-size checks (test/unit/managed/hostileGrowth.test.ts)
// and the side-by-side bench (test/bench/hostile.bench.ts): long runs of one character,
// invalid UTF-8, many arguments, deep JSON, a large multipart part — each about `n` bytes.
import type { SampleRequest } from '../server/src/requests/types';

const get = (url: string): SampleRequest => ({ method: 'GET', url, httpVersion: 'HTTP/1.1', headers: [['Host', 'example.com']], meta: {}, wire: true });
const post = (type: string, body: string): SampleRequest => ({
  method: 'POST',
  url: '/',
  httpVersion: 'HTTP/1.1',
  headers: [
    ['Host', 'example.com'],
    ['Content-Type', type],
    ['Content-Length', String(body.length)],
  ],
  body,
  meta: {},
  wire: true,
});

/** The hostile set, each request about `n` bytes long (n a multiple of 60). */
export const HOSTILE: readonly { readonly name: string; readonly make: (n: number) => SampleRequest }[] = [
  { name: 'query of %20', make: (n) => get('/?q=' + '%20'.repeat(n / 3)) },
  { name: 'query of spaces, raw', make: (n) => get('/?q=' + ' '.repeat(n)) },
  { name: "query of '", make: (n) => get('/?q=' + "'".repeat(n)) },
  { name: 'query of "', make: (n) => get('/?q=' + '%22'.repeat(n / 3)) },
  { name: 'query of <a%20', make: (n) => get('/?q=' + '<a%20'.repeat(n / 5)) },
  { name: 'query of %', make: (n) => get('/?q=' + '%'.repeat(n)) },
  { name: 'query of %ff (invalid UTF-8)', make: (n) => get('/?q=' + '%ff'.repeat(n / 3)) },
  { name: 'args a<i>=1', make: (n) => get('/?' + Array.from({ length: n / 10 }, (_, i) => `a${i}=1`).join('&')) },
  { name: 'JSON string of spaces', make: (n) => post('application/json', '{"a":"' + ' '.repeat(n) + '"}') },
  { name: 'JSON nested arrays', make: (n) => post('application/json', '['.repeat(n / 20) + ']'.repeat(n / 20)) },
  { name: 'urlencoded body of spaces', make: (n) => post('application/x-www-form-urlencoded', 'a=' + '+'.repeat(n)) },
  {
    name: 'multipart part of a',
    make: (n) => post('multipart/form-data; boundary=XyZ', `--XyZ\r\nContent-Disposition: form-data; name="f"\r\n\r\n${'a'.repeat(n)}\r\n--XyZ--\r\n`),
  },
];


/**
 * Large request bodies: time and extra memory to turn an upload into field values and run
 * it through a zone with the vendor and OWASP managed rulesets, for 8 and 32 MiB multipart
 * uploads (the body in memory) and a 1 GiB upload from a file (a sparse file read with the
 * CLI's readHead, and the same as a stream through streamedRequest, as a proxy reads a
 * request: only the inspected start is read). Each case prints the first request's time
 * (cold: V8 compiles the regexes for long values then) and the same request's again. Only the first 128 KiB (the
 * default inspection limit) become field values, so the figures should not grow with size.
 *
 *   node --import tsx test/bench/bodies.bench.ts
 *
 * Extra memory: the process's peak RSS (getrusage maxrss) after minus before the step, in a
 * fresh child process per case so that one case's peak does not hide the next. Figures, not
 * assertions (test/unit/requests/body.test.ts asserts the flat memory).
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readHead } from '../../server/src/cli/files';
import { defaultCatalog } from '../../server/src/managed/catalog';
import { streamedRequest, withBodyFiles, DEFAULT_BODY_LIMIT } from '../../server/src/requests/body';
import { requestValues } from '../../server/src/requests/fields';
import type { SampleRequest } from '../../server/src/requests/types';
import { compileZone } from '../../server/src/rulesets/engine';
import { OWASP_RULESET_ID, VENDOR_RULESET_ID } from '../../server/src/rulesets/managedIds';

const MiB = 1024 * 1024;
const HEAD = '--b\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\nContent-Type: application/octet-stream\r\n\r\n';
const TAIL = '\r\n--b--\r\n';
const base = { method: 'POST', url: 'https://example.com/upload', httpVersion: 'HTTP/1.1', headers: [['Content-Type', 'multipart/form-data; boundary=b']] as [string, string][], meta: {} };

function binary(n: number): string {
  let x = 0x2545f491;
  const block: string[] = [];
  for (let i = 0; i < 65536; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    block.push(String.fromCharCode(x & 0xff));
  }
  return block.join('').repeat(Math.ceil(n / 65536)).slice(0, n);
}

const maxRss = () => process.resourceUsage().maxRSS * 1024;

async function runCase(kind: string): Promise<void> {
  const zone = compileZone({
    catalog: defaultCatalog,
    entryPoints: {
      http_request_firewall_managed: {
        id: 'e'.repeat(32),
        phase: 'http_request_firewall_managed',
        rules: [
          { ref: 'vendor', expression: 'true', action: 'execute', action_parameters: { id: VENDOR_RULESET_ID } },
          { ref: 'owasp', expression: 'true', action: 'execute', action_parameters: { id: OWASP_RULESET_ID } },
        ],
      },
    },
  });
  zone.evaluate(requestValues({ ...base, body: HEAD + 'warm up' + TAIL }).values); // JIT and lazy data
  let req: SampleRequest;
  let dir: string | undefined;
  let stream: (() => Promise<SampleRequest>) | undefined;
  if (kind === '1gib-file' || kind === '1gib-stream') {
    dir = mkdtempSync(join(tmpdir(), 'rulesmith-bench-'));
    const file = join(dir, 'upload.bin');
    writeFileSync(file, '');
    truncateSync(file, 1024 * MiB);
    req = { ...base, bodySegments: [HEAD, { file, line: 0 }, TAIL] };
    // The same upload as a stream (a proxied request): the part header, then the file's chunks.
    const chunks = async function* (): AsyncGenerator<Uint8Array> {
      yield Buffer.from(HEAD, 'latin1');
      yield* createReadStream(file);
    };
    const size = HEAD.length + statSync(file).size + TAIL.length;
    if (kind === '1gib-stream') stream = async () => (await streamedRequest(base, chunks(), DEFAULT_BODY_LIMIT, size)).request;
  } else {
    const size = Number(kind.replace('mib', '')) * MiB;
    req = { ...base, body: HEAD + binary(size - HEAD.length - TAIL.length) + TAIL };
  }
  const before = maxRss();
  const t = process.hrtime.bigint();
  const read = stream ? await stream() : withBodyFiles(req, DEFAULT_BODY_LIMIT, readHead).request;
  const { values, fields } = requestValues(read);
  const ev = zone.evaluate(values);
  const ms = Number(process.hrtime.bigint() - t) / 1e6;
  const extra = (maxRss() - before) / MiB;
  // The same request again: the regexes are compiled for long values now (a server's steady state).
  const t2 = process.hrtime.bigint();
  zone.evaluate(requestValues(read).values);
  const again = Number(process.hrtime.bigint() - t2) / 1e6;
  if (dir) rmSync(dir, { recursive: true, force: true });
  console.log(
    `${kind.padEnd(11)} size ${String(fields['http.request.body.size']).padStart(10)}  truncated ${fields['http.request.body.truncated']}  first ${ms.toFixed(0).padStart(5)} ms, again ${again.toFixed(0).padStart(5)} ms  +${extra.toFixed(1)} MiB peak RSS  (${ev.decision.action})`,
  );
}

const which = process.argv[2];
if (which) void runCase(which);
else {
  console.log(`node ${process.version}; vendor + OWASP managed rulesets; inspection limit ${DEFAULT_BODY_LIMIT} bytes; one process per case`);
  for (const kind of ['8mib', '32mib', '1gib-file', '1gib-stream']) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), kind], { stdio: 'inherit' });
    if (r.status !== 0) process.exitCode = 1;
  }
}

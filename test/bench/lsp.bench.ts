// Language server latency over the wire (figures, not assertions), with diagnostics
// debounce 0 (initializationOptions.diagnosticsDelay) so that the figures are the
// server's own work plus the protocol round trip:
//   - server start (spawn) to the first diagnostics of a small .cfrule;
//   - didChange -> publishDiagnostics for one edit in a 4 KB .cfrule, and for one edit
//     in a 500-rule ruleset JSON (p50 and p95 over 50 edits each);
//   - completion request -> answer (p50 and p95), in a .cfrule and inside JSON.
// Targets (issue #3): edits p95 < 50 ms, start < 1 s, completion p95 < 30 ms.
// Needs the built server: `npm run bench` builds first.
import { performance } from 'node:perf_hooks';
import { LspClient, positionAt } from '../lsp/client';
import { row } from './measure';

const EDITS = 50;

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function figures(samples: number[]): { p50: string; p95: string; max: string } {
  const s = [...samples].sort((a, b) => a - b);
  const f = (x: number) => `${x.toFixed(1)} ms`;
  return { p50: f(percentile(s, 50)), p95: f(percentile(s, 95)), max: f(s[s.length - 1]) };
}

const typical =
  'http.request.uri.path contains "/admin" and not ip.src in {192.0.2.0/24 198.51.100.0/24} and http.request.method in {"POST" "PUT"}';

async function main(): Promise<void> {
  const results: [string, ReturnType<typeof figures> | { p50: string; p95: string; max: string }][] = [];

  // Start to first diagnostics.
  const starts: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const c = await LspClient.start();
    await c.open('file:///bench/start.cfrule', 'rulesmith-expression', typical);
    await c.diagnostics('file:///bench/start.cfrule', { version: 1 });
    starts.push(performance.now() - t0);
    await c.close();
  }
  results.push(['start -> first diagnostics (5 starts)', figures(starts)]);

  const client = await LspClient.start();
  try {
    // A 4 KB .cfrule: rewrite two characters inside a string literal in the middle, a
    // different pair each time (so that no result comes from the check cache).
    let big = typical;
    while (big.length + typical.length + 6 < 4096) big += ` or (${typical})`;
    const cfrule = 'file:///bench/big.cfrule';
    await client.open(cfrule, 'rulesmith-expression', big);
    const first = await client.diagnostics(cfrule, { version: 1 });
    if (first.diagnostics.length) throw new Error(`the 4 KB expression has diagnostics: ${first.diagnostics[0].message}`);
    const mid = big.indexOf('/admin', big.length / 2) + 2;
    const cfSamples: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      const pos = positionAt(big, mid);
      const t0 = performance.now();
      const v = await client.edit(cfrule, { start: pos, end: { line: pos.line, character: pos.character + 2 } }, String(i).padStart(2, '0'));
      await client.diagnostics(cfrule, { version: v });
      cfSamples.push(performance.now() - t0);
    }
    results.push([`edit in a ${big.length}-character .cfrule`, figures(cfSamples)]);

    // A 500-rule ruleset: change one character of one rule's expression, a different rule
    // each time (every edited expression is new to the check cache).
    const rules = Array.from({ length: 500 }, (_, i) => ({
      ref: `rule-${i}`,
      description: `rule ${i}`,
      expression: `(http.request.uri.path contains "/admin${i}" and not ip.src in {192.0.2.${i % 250}/32}) or (http.host eq "h${i}.example.com" and http.request.method in {"POST" "PUT"})`,
      action: 'block',
    }));
    const json = JSON.stringify({ name: 'bench', kind: 'zone', phase: 'http_request_firewall_custom', rules }, null, 2);
    const ruleset = 'file:///bench/big.ruleset.json';
    await client.open(ruleset, 'json', json);
    const r1 = await client.diagnostics(ruleset, { version: 1 });
    if (r1.diagnostics.length) throw new Error(`the ruleset has diagnostics: ${r1.diagnostics[0].message}`);
    const rsSamples: number[] = [];
    for (let i = 0; i < EDITS; i++) {
      const text = client.document(ruleset).getText();
      const at = text.indexOf(`"/admin${(i * 37) % 500}\\"`) + 2;
      const pos = positionAt(text, at);
      const t0 = performance.now();
      const v = await client.edit(ruleset, { start: pos, end: { line: pos.line, character: pos.character + 1 } }, String.fromCharCode(97 + (i % 26)));
      await client.diagnostics(ruleset, { version: v });
      rsSamples.push(performance.now() - t0);
    }
    results.push([`edit in a 500-rule ruleset (${Math.round(json.length / 1024)} KB)`, figures(rsSamples)]);

    // Completion: after `http.request.` at the end of a typical rule, and inside the ruleset.
    const small = 'file:///bench/complete.cfrule';
    const smallText = `${typical} and http.request.`;
    await client.open(small, 'rulesmith-expression', smallText);
    const completion = async (uri: string, text: string, offset: number): Promise<number[]> => {
      const samples: number[] = [];
      for (let i = 0; i < EDITS; i++) {
        const t0 = performance.now();
        await client.request('textDocument/completion', { textDocument: { uri }, position: positionAt(text, offset) });
        samples.push(performance.now() - t0);
      }
      return samples;
    };
    results.push(['completion in a .cfrule', figures(await completion(small, smallText, smallText.length))]);
    const rsText = client.document(ruleset).getText();
    const inJson = rsText.indexOf('http.host eq', rsText.length / 2) + 'http.host eq '.length;
    results.push(['completion inside the 500-rule ruleset', figures(await completion(ruleset, rsText, inJson))]);
    results.push(['completion at the end of the 4 KB .cfrule', figures(await completion(cfrule, client.document(cfrule).getText(), client.document(cfrule).getText().length))]);
  } finally {
    await client.close();
  }

  const widths = [46, 10, 10, 10];
  console.log('\nlanguage server, over stdio (debounce 0)');
  console.log(row(['measure', 'p50', 'p95', 'max'], widths));
  for (const [name, f] of results) console.log(row([name, f.p50, f.p95, f.max], widths));
}

// CommonJS under tsx (no top-level await): run and report failures.
main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});

// The HCL scanner's positions: every decoded unit of a string literal maps to the source
// character it came from (through escapes, `$${`, heredoc indentation), and what it decodes
// renders back to exactly what HashiCorp's parser (hcl2json) reads from the same file.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseHcl } from '../../../server/src/terraform/hcl';
import { asTemplate, attribute, scanHcl, type HclString } from '../../../server/src/terraform/hclScan';

function only(text: string): HclString {
  const v = attribute(scanHcl(text), 'a')?.value;
  assert.equal(v?.kind, 'string');
  return v as HclString;
}

test('quoted: escapes decode and each unit maps to the start of its escape', () => {
  const src = 'a = "x\\"y\\\\z\\u00e9\\U0001F600\\t$${v}%%{w}"\n';
  const s = only(src);
  assert.equal(s.text, 'x"y\\zé😀\t${v}%{w}');
  // x  \"  y  \\  z  \u00e9  \U0001F600 (two units)  \t  $${ (two units)  v  }  %%{  w  }
  const at = (k: number) => s.offsets[k];
  assert.deepEqual(
    s.offsets,
    [5, 6, 8, 9, 11, 12, 18, 18, 28, 30, 32, 33, 34, 35, 37, 38, 39, 40],
  );
  assert.equal(src.slice(at(1), at(1) + 2), '\\"');
  assert.equal(src.slice(at(5), at(5) + 6), '\\u00e9');
  assert.equal(src[at(s.text.length)], '"');
  assert.equal(s.interpolations.length, 0);
});

test('quoted: interpolations are kept as written, with their place in the text', () => {
  const src = 'a = "host eq \\"${var.host}\\" ${lower("A}")}"\n';
  const s = only(src);
  assert.equal(s.text, 'host eq "${var.host}" ${lower("A}")}');
  assert.deepEqual(
    s.interpolations.map((i) => [i.start, i.end, i.source]),
    [
      [9, 20, '${var.host}'],
      [22, 36, '${lower("A}")}'],
    ],
  );
  assert.equal(src.slice(s.offsets[9], s.offsets[20]), '${var.host}');
});

test('heredoc <<-: the common indentation comes off, offsets point past it', () => {
  const src = 'a = <<-EOT\n    http.host eq "a"\n      and ip.src eq 1.2.3.4\n\n    EOT\n';
  const s = only(src);
  assert.equal(s.text, 'http.host eq "a"\n  and ip.src eq 1.2.3.4\n\n');
  assert.equal(src.slice(s.offsets[0], s.offsets[0] + 9), 'http.host');
  const and = s.text.indexOf('and');
  assert.equal(src.slice(s.offsets[and], s.offsets[and] + 3), 'and');
  assert.equal(s.heredoc, true);
  assert.equal(src.slice(s.start, s.end), src.slice(4, src.length - 1));
});

test('heredoc <<: no escapes, indentation kept', () => {
  const s = only('a = <<EOT\n  x \\n $${y}\nEOT\n');
  assert.equal(s.text, '  x \\n ${y}\n');
});

const AGREE = [
  'a = "plain"\n',
  'a = "q\\"uote\\\\ \\u00e9 \\U0001F600 \\t"\n',
  'a = "$${lit} %%{lit} ${var.x} $x %y"\n',
  'a = <<-EOT\n    x\n\n      y\n    z ${var.q}\n  EOT\n',
  'a = <<EOT\n  x $${y}\n  ${var.q} \\n\nEOT\n',
  'a = <<-EOT\n\t\tx\n\t  y\nEOT\n',
];

test('what the scanner decodes renders back to exactly what hcl2json reads', async () => {
  for (const src of AGREE) {
    const parsed = await parseHcl(src);
    assert.ok(parsed.ok, src);
    assert.equal(asTemplate(only(src)), (parsed.json as { a: string }).a, src);
  }
});

test('blocks, labels, lists and objects (v5 attributes and v4 blocks)', () => {
  const root = scanHcl('resource "cloudflare_ruleset" "waf" {\n  rules = [\n    { expression = "a", action = "block" },\n    {\n      expression: "b"\n    }\n  ]\n  rules {\n    expression = "c"\n  }\n}\n');
  const [block] = root.blocks;
  assert.deepEqual([block.type, ...block.labels], ['resource', 'cloudflare_ruleset', 'waf']);
  const rules = attribute(block.body, 'rules')?.value;
  assert.equal(rules?.kind, 'list');
  const texts = rules?.kind === 'list' ? rules.items.map((i) => (i.kind === 'object' ? (attribute(i, 'expression')?.value as HclString).text : '?')) : [];
  assert.deepEqual(texts, ['a', 'b']);
  assert.deepEqual(block.body.blocks.map((b) => (attribute(b.body, 'expression')?.value as HclString).text), ['c']);
});

test('opaque expressions are skipped whole: calls, conditionals, comments', () => {
  const root = scanHcl('a = concat(["x"], var.y) # c\nb = var.c ? "p" : "q"\n/* x = 1 */\nc = "z"\n');
  assert.deepEqual(root.attributes.map((a) => [a.name, a.value.kind]), [['a', 'other'], ['b', 'other'], ['c', 'string']]);
});

// A URL from live traffic shown in a Markdown trace must stay text: a backtick in it must
// not end the code span and let `<img src=…>` load in the preview.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inlineCode } from '../../../client/src/markdownText';

test('a code span that its text cannot end', () => {
  assert.equal(inlineCode('GET /a?q=1'), '`GET /a?q=1`');
  assert.equal(inlineCode('GET /?q=`</code><img src=https://x.example/p>`'), '`` GET /?q=`</code><img src=https://x.example/p>` ``');
  assert.equal(inlineCode('GET /?q=```x'), '````GET /?q=```x````');
  assert.equal(inlineCode('a\r\nb'), '`a b`');
});

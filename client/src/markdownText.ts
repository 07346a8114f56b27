// Text from live traffic (a request's URL, method) put into Markdown the extension shows,
// where the preview would render HTML and load images (no `vscode` import: tested in Node).

/**
 * `text` as one CommonMark code span that nothing in it can end: the fence is one backtick
 * longer than its longest run of backticks, so `</code><img src=…>` in a URL stays text.
 */
export function inlineCode(text: string): string {
  const oneLine = text.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...(oneLine.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  // A span that starts or ends with a backtick needs a space inside its fence.
  const pad = oneLine.startsWith('`') || oneLine.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${oneLine}${pad}${fence}`;
}

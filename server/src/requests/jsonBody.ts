/**
 * JSON.parse of a request body's text, remembered for the last text parsed: each request's
 * body is parsed by the sniffer (is it JSON? sniff.ts) and again for the CRS fields (its
 * leaves, crsFields.ts); the second gets the first's result instead of parsing the same
 * text again. The value is shared: callers only read it.
 */
let lastText: string | undefined;
let lastValue: unknown;

/** The parsed value, or undefined when the text is not JSON. */
export function parseJsonBody(text: string): unknown {
  if (text !== lastText) {
    try {
      lastValue = JSON.parse(text) as unknown;
    } catch {
      lastValue = undefined;
    }
    lastText = text;
  }
  return lastValue;
}

// "Save as sample request": an event's request as a `.http` block with its metadata
// comments (requests/http.ts reads `# @field value` as edge fields), so Evaluate and
// Trace on zone run it again as a regression sample. No vscode import: unit-tested.
import type { SecurityEvent } from './queries';

/** The `.http` block of an event's request (ends with a newline). */
export function eventAsHttp(e: SecurityEvent): string {
  const target = `https://${e.clientRequestHTTPHost}${e.clientRequestPath}${e.clientRequestQuery ? `?${e.clientRequestQuery}` : ''}`;
  const lines = [
    `### ${e.action} by ${e.description || e.ref || e.ruleId} (ray ${e.rayName})`,
    `# security event ${e.rayName} at ${e.datetime}: ${e.action} (${e.source}) by rule ${e.ruleId}${e.rulesetId ? ` of ruleset ${e.rulesetId}` : ''}, response ${e.edgeResponseStatus}`,
    `# @ip.src ${e.clientIP}`,
  ];
  if (e.clientCountryName) lines.push(`# @ip.src.country ${e.clientCountryName}`);
  if (e.clientAsn) lines.push(`# @ip.src.asnum ${e.clientAsn}`);
  lines.push(`${e.clientRequestHTTPMethodName} ${target} ${e.clientRequestHTTPProtocol || 'HTTP/1.1'}`);
  if (e.userAgent) lines.push(`User-Agent: ${e.userAgent}`);
  return `${lines.join('\n')}\n`;
}

/** `existing` (a `.http` file's text, maybe empty) with the event's request appended. */
export function appendSample(existing: string, e: SecurityEvent): string {
  if (existing.trim() === '') return eventAsHttp(e);
  const sep = existing.endsWith('\n\n') ? '' : existing.endsWith('\n') ? '\n' : '\n\n';
  return `${existing}${sep}${eventAsHttp(e)}`;
}

/**
 * The previous WAF's OWASP sensitivity as the migration will turn it into paranoia level and
 * score threshold, in the dashboard's words (managed/thresholds.ts). The two scales run
 * opposite ways — a previous "Medium" sensitivity becomes the new "High – 25 and higher"
 * threshold — so the review says both, side by side, instead of one word that clashes.
 */
import { thresholdText } from '../managed/thresholds';
import { owaspMapping } from './config';
import { SENSITIVITIES, type ActionMode, type Sensitivity } from './previousWafContent';

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `sensitivity Medium, action simulate → PL1, threshold High – 25 and higher, log`. */
export function sensitivityMigrationText(sensitivity: string | undefined, actionMode: string | undefined): string {
  const s = sensitivity && (SENSITIVITIES as readonly string[]).includes(sensitivity) ? (sensitivity as Sensitivity) : undefined;
  const a = actionMode === 'simulate' || actionMode === 'block' || actionMode === 'challenge' ? (actionMode as ActionMode) : undefined;
  const before = `sensitivity ${s ? capital(s) : 'Default'}, action ${a ?? 'challenge'}`;
  const m = owaspMapping(s, a);
  if (!m) return `${before} → no OWASP rule after the migration`;
  return `${before} → PL${m.paranoiaLevel}, threshold ${thresholdText(m.threshold)}, ${m.action}`;
}

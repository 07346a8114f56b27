/**
 * The one wording of the OWASP anomaly score threshold, the hosted dashboard's: "High – 25
 * and higher", "Medium – 40 and higher", "Low – 60 and higher". High means the most
 * requests are acted on (the lowest threshold). The picker, the CodeLens and hover of an
 * execute rule, and the migration review all say it this way, so that the previous WAF's
 * "sensitivity Medium", which migrates to threshold 25, is shown as what it becomes —
 * "High – 25 and higher" — rather than clashing with a picker that calls 25 "high sensitivity".
 */
import { OWASP_DEFAULT_THRESHOLD, OWASP_THRESHOLDS } from './owasp';

export interface NamedThreshold {
  readonly threshold: number;
  readonly name: 'High' | 'Medium' | 'Low';
  /** As the dashboard's picker reads. */
  readonly label: string;
}

export const NAMED_THRESHOLDS: readonly NamedThreshold[] = [
  { threshold: OWASP_THRESHOLDS.high, name: 'High', label: `High – ${OWASP_THRESHOLDS.high} and higher` },
  { threshold: OWASP_THRESHOLDS.medium, name: 'Medium', label: `Medium – ${OWASP_THRESHOLDS.medium} and higher` },
  { threshold: OWASP_THRESHOLDS.low, name: 'Low', label: `Low – ${OWASP_THRESHOLDS.low} and higher` },
];

/** `High – 25 and higher`, or `30 and higher (custom)` for a threshold without a name. */
export function thresholdText(t: number): string {
  return NAMED_THRESHOLDS.find((n) => n.threshold === t)?.label ?? `${t} and higher (custom)`;
}

/** What each named threshold means in practice, for the picker's detail line. */
export function thresholdDetail(t: number): string {
  const base = t === OWASP_THRESHOLDS.high ? 'acts on the most requests (more false positives)' : t === OWASP_THRESHOLDS.low ? 'acts on the fewest requests (attacks may pass)' : 'between the two';
  return t === OWASP_DEFAULT_THRESHOLD ? `${base}; the default` : base;
}

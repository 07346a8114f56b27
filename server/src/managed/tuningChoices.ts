/**
 * The choices of "Set Paranoia Level" and "Set Score Threshold", as data (the client shows
 * them in quick picks): each marks the value in effect, thresholds in the dashboard's
 * words (thresholds.ts), and "Keep the current action" says which action that is.
 */
import { NAMED_THRESHOLDS, thresholdDetail } from './thresholds';

export interface Choice<T> {
  readonly label: string;
  readonly description: string;
  readonly detail?: string;
  readonly value: T;
}

const LEVEL_TEXT = ['', 'PL1: the fewest false positives', 'PL2: more rules, some tuning needed', 'PL3: specialised rules, tuning needed', 'PL4: every rule, much tuning needed'];

/** Paranoia levels 1–4; `current` (0 or undefined: unknown) is marked. */
export function levelItems(current: number | undefined): Choice<number>[] {
  return [1, 2, 3, 4].map((l) => ({ label: `Paranoia level ${l}`, description: l === current ? 'current' : '', detail: LEVEL_TEXT[l], value: l }));
}

/** The named thresholds, then "Other…" (value -1); the one in effect is marked, also when it has no name. */
export function thresholdItems(current: number | undefined): Choice<number>[] {
  const named = NAMED_THRESHOLDS.map((n) => ({ label: n.label, description: n.threshold === current ? 'current' : '', detail: thresholdDetail(n.threshold), value: n.threshold }));
  const custom = current !== undefined && !NAMED_THRESHOLDS.some((n) => n.threshold === current);
  return [...named, { label: 'Other…', description: custom ? `current: ${current} and higher` : 'any whole number', value: -1 }];
}

/** `Keep the current action (block)`, or without the name when it is not known. */
export function keepActionLabel(action: string | undefined): string {
  return action ? `Keep the current action (${action})` : 'Keep the current action';
}

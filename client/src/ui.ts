// The questions the commands ask (confirmations, picks, inputs) and the messages they
// show, in one place. Tests inside the extension host cannot click a modal dialog, so
// the extension's API lets them queue answers (`testing.answer(...)`); each question
// takes the next queued answer when there is one and records what it asked. Without
// queued answers everything goes to VS Code as usual.
import * as vscode from 'vscode';

export type Answer = string | undefined | readonly string[];

export interface Asked {
  readonly kind: 'confirm' | 'pick' | 'input' | 'info' | 'warning' | 'error';
  readonly message: string;
  readonly detail?: string;
  readonly items?: readonly string[];
  readonly answer?: Answer;
}

const queue: Answer[] = [];
const asked: Asked[] = [];

export const testing = {
  /** Queues answers for the next questions (a button or item label, an input text, or undefined for Cancel). */
  answer(...answers: Answer[]): void {
    queue.push(...answers);
  },
  /** Everything asked or shown since the last call (then forgotten). */
  take(): Asked[] {
    return asked.splice(0);
  },
  /** Everything asked or shown since the last take(), kept. */
  peek(): Asked[] {
    return [...asked];
  },
  pending(): number {
    return queue.length;
  },
  clear(): void {
    queue.length = 0;
    asked.length = 0;
  },
};

function queued(): { has: boolean; value: Answer } {
  if (queue.length === 0) return { has: false, value: undefined };
  return { has: true, value: queue.shift() };
}

/** A modal confirmation; resolves with the chosen button or undefined (Cancel). */
export async function confirm(message: string, detail: string, ...buttons: string[]): Promise<string | undefined> {
  const q = queued();
  if (q.has) {
    const a = typeof q.value === 'string' && buttons.includes(q.value) ? q.value : undefined;
    asked.push({ kind: 'confirm', message, detail, items: buttons, answer: a });
    return a;
  }
  asked.push({ kind: 'confirm', message, detail, items: buttons });
  return vscode.window.showWarningMessage(message, { modal: true, detail }, ...buttons);
}

export interface PickItem<T> extends vscode.QuickPickItem {
  readonly value: T;
}

/** A quick pick; a queued answer selects the item whose label (or value) equals it. */
export async function pick<T>(items: readonly PickItem<T>[], options: vscode.QuickPickOptions & { title: string }): Promise<PickItem<T> | undefined> {
  const q = queued();
  const labels = items.map((i) => i.label);
  if (q.has) {
    const hit = items.find((i) => i.label === q.value || String(i.value) === q.value);
    asked.push({ kind: 'pick', message: options.title, items: labels, answer: hit?.label });
    return hit;
  }
  asked.push({ kind: 'pick', message: options.title, items: labels });
  return vscode.window.showQuickPick(items as PickItem<T>[], { ignoreFocusOut: true, ...options });
}

/** An input box; a queued answer is returned after the validator accepts it. */
export async function input(options: vscode.InputBoxOptions & { title: string }): Promise<string | undefined> {
  const q = queued();
  if (q.has) {
    const v = typeof q.value === 'string' ? q.value : undefined;
    const invalid = v !== undefined && options.validateInput ? await options.validateInput(v) : undefined;
    // Never record what was typed into a password box.
    asked.push({ kind: 'input', message: options.title, answer: options.password ? '***' : v });
    return invalid ? undefined : v;
  }
  asked.push({ kind: 'input', message: options.title });
  return vscode.window.showInputBox({ ignoreFocusOut: true, ...options });
}

function shown(kind: 'info' | 'warning' | 'error', message: string, actions: string[]): Thenable<string | undefined> {
  asked.push({ kind, message, items: actions });
  const full = `Rulesmith: ${message}`;
  // Notifications are not awaited by commands (a toast never blocks); tests read `asked`.
  if (kind === 'info') return vscode.window.showInformationMessage(full, ...actions);
  if (kind === 'warning') return vscode.window.showWarningMessage(full, ...actions);
  return vscode.window.showErrorMessage(full, ...actions);
}

export const info = (message: string, ...actions: string[]) => shown('info', message, actions);
export const warn = (message: string, ...actions: string[]) => shown('warning', message, actions);
export const error = (message: string, ...actions: string[]) => shown('error', message, actions);

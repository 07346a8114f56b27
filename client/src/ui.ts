// The questions the commands ask (confirmations, picks, inputs), the messages they show
// and their progress, in one place. Tests inside the extension host cannot click a modal
// dialog, so the extension's API lets them queue answers (`testing.answer(...)`); each
// question takes the next queued answer when there is one and records what it asked.
// The hook exists only when the extension host was started with RULESMITH_TEST_HOOKS=1
// (enableTesting): otherwise nothing is recorded and no other extension can answer a
// confirmation (say, the irreversible migration) in the user's place.
import * as vscode from 'vscode';

/** A button or item label, an input text, undefined for Cancel; or a function run when the question is asked. */
export type Answer = string | undefined | readonly string[] | ((asked: Asked) => string | undefined | Promise<string | undefined>);

export interface Asked {
  readonly kind: 'confirm' | 'pick' | 'input' | 'info' | 'warning' | 'error' | 'progress';
  readonly message: string;
  readonly detail?: string;
  readonly items?: readonly string[];
  /** A pick's item descriptions (e.g. which one is `current`), in the order of `items`. */
  readonly descriptions?: readonly string[];
  readonly answer?: Answer;
}

const queue: Answer[] = [];
const asked: Asked[] = [];
let enabled = false;

/** Turns the test hook on (activate() does, under RULESMITH_TEST_HOOKS=1 only). */
export function enableTesting(): void {
  enabled = true;
}

function record(a: Asked): void {
  if (enabled) asked.push(a);
}

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

async function queued(question: Asked): Promise<{ has: boolean; value: string | undefined | readonly string[] }> {
  if (!enabled || queue.length === 0) return { has: false, value: undefined };
  const v = queue.shift();
  return { has: true, value: typeof v === 'function' ? await v(question) : v };
}

/** A modal confirmation; resolves with the chosen button or undefined (Cancel). */
export async function confirm(message: string, detail: string, ...buttons: string[]): Promise<string | undefined> {
  const q = await queued({ kind: 'confirm', message, detail, items: buttons });
  if (q.has) {
    const a = typeof q.value === 'string' && buttons.includes(q.value) ? q.value : undefined;
    record({ kind: 'confirm', message, detail, items: buttons, answer: a });
    return a;
  }
  record({ kind: 'confirm', message, detail, items: buttons });
  return vscode.window.showWarningMessage(message, { modal: true, detail }, ...buttons);
}

/**
 * A non-modal question: a notification with `buttons` that leaves the editor (say, a diff
 * to read) usable; resolves with the chosen button, or undefined when it is closed.
 */
export async function ask(message: string, ...buttons: string[]): Promise<string | undefined> {
  const q = await queued({ kind: 'confirm', message, items: buttons });
  if (q.has) {
    const a = typeof q.value === 'string' && buttons.includes(q.value) ? q.value : undefined;
    record({ kind: 'confirm', message, items: buttons, answer: a });
    return a;
  }
  record({ kind: 'confirm', message, items: buttons });
  return vscode.window.showInformationMessage(`Rulesmith: ${message}`, ...buttons);
}

export interface PickItem<T> extends vscode.QuickPickItem {
  readonly value: T;
}

/** A quick pick; a queued answer selects the item whose label (or value) equals it. */
export async function pick<T>(items: readonly PickItem<T>[], options: vscode.QuickPickOptions & { title: string }): Promise<PickItem<T> | undefined> {
  const labels = items.map((i) => i.label);
  const descriptions = items.map((i) => i.description ?? '');
  const q = await queued({ kind: 'pick', message: options.title, items: labels });
  if (q.has) {
    const hit = items.find((i) => i.label === q.value || String(i.value) === q.value);
    record({ kind: 'pick', message: options.title, items: labels, descriptions, answer: hit?.label });
    return hit;
  }
  record({ kind: 'pick', message: options.title, items: labels, descriptions });
  return vscode.window.showQuickPick(items as PickItem<T>[], { ignoreFocusOut: true, ...options });
}

/** An input box; a queued answer is returned after the validator accepts it. */
export async function input(options: vscode.InputBoxOptions & { title: string }): Promise<string | undefined> {
  const q = await queued({ kind: 'input', message: options.title, ...(options.prompt ? { detail: options.prompt } : {}) });
  if (q.has) {
    const v = typeof q.value === 'string' ? q.value : undefined;
    const invalid = v !== undefined && options.validateInput ? await options.validateInput(v) : undefined;
    // Never record what was typed into a password box.
    record({ kind: 'input', message: options.title, ...(options.prompt ? { detail: options.prompt } : {}), answer: options.password ? '***' : v });
    return invalid ? undefined : v;
  }
  record({ kind: 'input', message: options.title, ...(options.prompt ? { detail: options.prompt } : {}) });
  return vscode.window.showInputBox({ ignoreFocusOut: true, ...options });
}

function shown(kind: 'info' | 'warning' | 'error', message: string, actions: string[]): Thenable<string | undefined> {
  record({ kind, message, items: actions });
  const full = `Rulesmith: ${message}`;
  // Notifications are not awaited by commands (a toast never blocks); tests read `asked`.
  if (kind === 'info') return vscode.window.showInformationMessage(full, ...actions);
  if (kind === 'warning') return vscode.window.showWarningMessage(full, ...actions);
  return vscode.window.showErrorMessage(full, ...actions);
}

export const info = (message: string, ...actions: string[]) => shown('info', message, actions);
export const warn = (message: string, ...actions: string[]) => shown('warning', message, actions);
export const error = (message: string, ...actions: string[]) => shown('error', message, actions);

/**
 * Runs `task` under a progress notification titled `title` (or in the status bar with
 * `window`); `task` may report steps. Recorded for tests as kind 'progress'.
 */
export function progress<T>(title: string, task: (report: (message: string) => void) => Promise<T>, where: 'notification' | 'window' = 'notification'): Promise<T> {
  record({ kind: 'progress', message: title });
  const location = where === 'window' ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification;
  return Promise.resolve(
    vscode.window.withProgress({ location, title }, (p) =>
      task((message) => {
        record({ kind: 'progress', message: `${title} ${message}` });
        p.report({ message });
      }),
    ),
  );
}

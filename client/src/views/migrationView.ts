// The Migration view: for the chosen zone, the migration status (previous and new
// managed rules enabled or not, state), whether it can migrate (and why not), and the
// previous version's packages with their sensitivity and action. The commands in its
// title bar check, review, start validation mode and migrate.
import * as vscode from 'vscode';
import { isEnterprise, type Connection } from '../api/connection';
import { RulesApiError } from '../api/errors';
import type { MigrationCheck, MigrationStatus, WafPackage, Zone } from '../api/rulesApi';
import { sensitivityMigrationText } from '../../../server/src/migration/sensitivityWording';
import { BaseProvider, errorNodes, message, messageItem, type MessageNode } from './common';

export type MigrationNode = MessageNode | { readonly kind: 'packages'; readonly id: string; readonly packages: readonly WafPackage[] };

export interface MigrationSnapshot {
  readonly zone: Zone;
  readonly status?: MigrationStatus;
  readonly check?: MigrationCheck;
  readonly packages?: readonly WafPackage[];
  readonly errors: readonly string[];
  /** What to do about each error (same order). */
  readonly advice?: readonly string[];
}

const STATE_TEXT: Readonly<Record<string, string>> = {
  default: 'not started',
  start: 'not started',
  validation: 'validation mode (both versions run)',
  pending: 'migrating',
  complete: 'migrated',
};

export class MigrationView extends BaseProvider<MigrationNode> {
  /** The last snapshot (tests and commands read it). */
  last: MigrationSnapshot | undefined;

  constructor(private readonly connection: Connection) {
    super();
  }

  getTreeItem(n: MigrationNode): vscode.TreeItem {
    if (n.kind === 'message') return messageItem(n);
    const item = new vscode.TreeItem('Previous managed rules packages', vscode.TreeItemCollapsibleState.Expanded);
    item.id = n.id;
    item.description = String(n.packages.length);
    item.iconPath = new vscode.ThemeIcon('package');
    return item;
  }

  /** Fetches status, compatibility and packages of the chosen zone. */
  async snapshot(): Promise<MigrationSnapshot | undefined> {
    const zoneId = this.connection.zoneId;
    if (!zoneId) return undefined;
    const api = await this.connection.api();
    const zone = await this.connection.zone(zoneId);
    const errors: string[] = [];
    const advice: string[] = [];
    const get = async <T>(p: Promise<T>): Promise<T | undefined> => {
      try {
        return await p;
      } catch (e) {
        // The service is down: one failure to show (with Start / Retry), not one per call.
        if (e instanceof RulesApiError && e.unreachable) throw e;
        errors.push(e instanceof RulesApiError ? `${e.operation}: ${e.message}` : e instanceof Error ? e.message : String(e));
        advice.push(e instanceof RulesApiError ? e.advice : 'See "Rulesmith: Show Output".');
        return undefined;
      }
    };
    const [status, check] = await Promise.all([get(api.migrationStatus(zoneId)), get(api.migrationCheck(zoneId))]);
    // After migration the previous version's APIs answer an error: do not ask.
    const packages = status?.migration_state === 'complete' ? [] : await get(api.wafPackages(zoneId));
    this.last = { zone, status, check, packages, errors, advice };
    await this.connection.setMigrationState(zoneId, status?.migration_state ?? check?.migration_state);
    return this.last;
  }

  async getChildren(n?: MigrationNode): Promise<MigrationNode[]> {
    if (n) {
      if (n.kind !== 'packages') return [];
      return n.packages.map((p) =>
        message(`pkg:${p.id}`, p.name, 'package', undefined, `${p.description ?? ''}\n${p.detection_mode ?? ''}${p.sensitivity ? ` · sensitivity ${p.sensitivity}` : ''}${p.action_mode ? ` · action ${p.action_mode}` : ''}`),
      ).map((m, i) => ({ ...m, text: `${m.text} — ${packageState(n.packages[i])}` }));
    }
    if (!this.connection.state().signedIn || !this.connection.zoneId) return [];
    try {
      const s = await this.snapshot();
      if (!s) return [];
      const out: MigrationNode[] = [];
      const z = s.zone;
      out.push(message('mig/zone', `${z.name} — ${z.plan?.name ?? 'unknown plan'}`, 'globe', undefined, isEnterprise(z) ? 'Enterprise: validation mode is available.' : 'Validation mode needs Enterprise.'));
      const st = s.status;
      if (st) {
        const state = st.migration_state ?? 'unknown';
        out.push(message('mig/state', `Migration: ${STATE_TEXT[state] ?? state}`, state === 'complete' ? 'pass-filled' : state === 'validation' ? 'beaker' : 'history', undefined, `state ${state}${st.source ? `, source ${st.source}` : ''}${st.created ? `, since ${st.created}` : ''}`));
        out.push(message('mig/old', `Previous managed rules: ${st.old_waf_status ?? 'unknown'}`, st.old_waf_status === 'enabled' ? 'circle-filled' : 'circle-outline'));
        out.push(message('mig/new', `New managed rules: ${st.new_waf_status ?? 'unknown'}`, st.new_waf_status === 'enabled' ? 'circle-filled' : 'circle-outline'));
      }
      const c = s.check;
      if (c && st?.migration_state !== 'complete') {
        if (c.compatible) out.push(message('mig/compatible', 'Compatible: can migrate', 'pass', { command: 'rulesmith.reviewMigration', title: 'Review Migration' }, 'Click to review the new configuration.'));
        else {
          const reasons = c.reasons?.map((r) => r.message) ?? [];
          out.push(message('mig/incompatible', `Not eligible${reasons[0] ? `: ${reasons[0]}` : ''}`, 'warning', { command: 'rulesmith.checkMigration', title: 'Check Migration' }, reasons.join('\n') || 'The service says the zone cannot migrate.'));
        }
      }
      if (s.packages && s.packages.length > 0) out.push({ kind: 'packages', id: 'mig/packages', packages: s.packages });
      for (const [i, e] of s.errors.entries()) {
        const what = s.advice?.[i];
        out.push({ ...message(`mig/err${i}`, e, 'error', { command: 'rulesmith.refreshViews', title: 'Refresh' }, `${e}${what ? `\n\n${what}` : ''}`), ...(what ? { description: what } : {}) });
      }
      return out;
    } catch (e) {
      return errorNodes('mig/error', e, this.connection.isLocal);
    }
  }
}

function packageState(p: WafPackage): string {
  if (p.detection_mode === 'anomaly') return sensitivityMigrationText(p.sensitivity, p.action_mode);
  return p.status ?? p.detection_mode ?? '';
}

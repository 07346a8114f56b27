/** Every route family of the service, registered on one router, and their demo seed steps. */
import type { Router } from '../router';
import type { SeedStep } from '../seed';
import { accountRoutes } from './accounts';
import { rulesetRoutes } from './rulesets';
import { filterRoutes } from './filters';
import { firewallRuleRoutes } from './firewallRules';
import { migrationRoutes } from './migration';
import { previousWafRoutes, seedPreviousWaf } from './previousWaf';
import { traceRoutes } from './trace';
import { zoneSettingRoutes } from './zoneSettings';
import { graphqlRoutes } from './graphql';

export function registerRoutes(r: Router): void {
  accountRoutes(r);
  rulesetRoutes(r);
  firewallRuleRoutes(r);
  filterRoutes(r);
  migrationRoutes(r);
  previousWafRoutes(r);
  traceRoutes(r);
  zoneSettingRoutes(r);
  graphqlRoutes(r);
}

/** What each family adds to the demo seed, in order. */
export const demoSeedSteps: readonly SeedStep[] = [seedPreviousWaf];

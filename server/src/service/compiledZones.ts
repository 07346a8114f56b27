/**
 * Zones compiled once per deployment, for everything in one thread that evaluates a zone's
 * deployed configuration: the trace worker (traceEval.ts) and the WAF proxy
 * (server/src/proxy/).
 */
import { compileZone, type CompiledZone } from '../rulesets/engine';
import { zoneConfigOf, type DeployedZone, type ZoneSource } from './deployment';

/** Zones kept compiled (least recently used dropped first). */
const MAX_COMPILED = 32;
const compiledZones = new Map<string, { key: string; deployed: DeployedZone; compiled: CompiledZone }>();

/**
 * A zone compiled under its deployment key (zoneConfig.ts `deploymentKey`), from this
 * thread's cache while the key holds, else built from `source` — undefined when there is
 * none to build from. The trace worker and the WAF proxy (server/src/proxy/) share it: a
 * deploy gives a new key, and the new zone replaces the old entry in one step, so a caller
 * gets either the old configuration or the new one, never a mix.
 */
export function compiledZone(zoneId: string, key: string, source: (() => ZoneSource) | ZoneSource | undefined): { deployed: DeployedZone; compiled: CompiledZone; cached: boolean } | undefined {
  const hit = compiledZones.get(zoneId);
  if (hit && hit.key === key) {
    compiledZones.delete(zoneId);
    compiledZones.set(zoneId, hit);
    return { ...hit, cached: true };
  }
  if (!source) return undefined;
  const deployed = zoneConfigOf(typeof source === 'function' ? source() : source);
  const compiled = compileZone(deployed.config, deployed.previousWaf ? { previousWaf: deployed.previousWaf } : {});
  compiledZones.delete(zoneId);
  compiledZones.set(zoneId, { key, deployed, compiled });
  while (compiledZones.size > MAX_COMPILED) compiledZones.delete(compiledZones.keys().next().value!);
  return { deployed, compiled, cached: false };
}

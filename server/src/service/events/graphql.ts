/**
 * The GraphQL Analytics API's security events, in the hosted shape:
 *
 *   viewer { zones(filter: {zoneTag}) {
 *     firewallEventsAdaptive(filter, limit, orderBy) { action clientIP … }
 *     firewallEventsAdaptiveGroups(filter, limit, orderBy: [count_DESC]) { count dimensions { ruleId … } } } }
 *
 * A real GraphQL implementation (the `graphql` package: parse, validate, execute against a
 * schema generated from fields.ts); errors are GraphQL errors in `errors`, never a 500.
 * Limits, each with its own error: LIMITS below (the largest `limit`, the longest time
 * range, the query's depth, width and size, how many zones and datasets one query may ask
 * for). Depth and width are measured on the document before validation and execution, so a
 * query built to multiply its fields through aliases and fragments (introspection included)
 * costs no more than its own size.
 * A zone is readable with Zone Analytics Read or Zone Read (Write includes Read); `zones`
 * without a filter answers the zones the credentials may read (by zone tag, at most
 * LIMITS.maxZones; `zoneTag_gt` pages on), as the hosted API does.
 *
 * Variables may be declared with the hosted API's type names, as queries copied from
 * Cloudflare's docs and dashboards are: its scalars (`string`, `uint64`, `bool` …, real
 * scalars of this schema, HOSTED_SCALARS), its names of the events filter
 * (FILTER_ALIASES: the document is read as if it named ours), and without `!` where a
 * value is required (the hosted API accepts `$filter: …_InputObject` for a required
 * filter; a null or missing value is then that argument's error). A variable whose type
 * does not fit still gets an error naming it, its declared type and the type expected
 * (hostedVariablePositions).
 */
import {
  buildSchema,
  execute,
  getNamedType,
  getDirectiveValues,
  GraphQLError,
  GraphQLIncludeDirective,
  GraphQLSkipDirective,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  parse,
  print,
  specifiedRules,
  typeFromAST,
  validate,
  valueFromASTUntyped,
  VariablesInAllowedPositionRule,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLResolveInfo,
  type GraphQLType,
  type NamedTypeNode,
  type SelectionSetNode,
  type TypeNode,
  type ValidationRule,
  type VariableDefinitionNode,
} from 'graphql';
import { allowed, type Principal } from '../auth';
import { ZONE_SELECT, type ZoneRow } from '../scope';
import type { Store } from '../store';
import { EVENT_ROW_FIELDS, FILTER_FIELDS, GROUP_DIMENSIONS, type EventField } from './fields';
import { groupEvents, listEvents, OPERATORS, QueryError, timeRange, type EventReader, type Filter } from './query';

export const LIMITS = {
  /** The largest `limit` of one dataset field. */
  maxLimit: 10_000,
  /** The longest time range (datetime_geq to datetime_leq). */
  maxRangeMs: 31 * 86_400_000,
  /** Nesting of fields, introspection's `__` fields included (the standard introspection query nests 14). */
  maxDepth: 15,
  /**
   * Field selections one operation resolves, counted on the document: fragments expanded,
   * every alias and repeat counted, a field's selection counted once per occurrence of
   * that field (a list's items are not counted: their number is unknown before execution).
   */
  maxFields: 5_000,
  /**
   * Of those, the field selections inside introspection (`__schema`, `__type`): its lists
   * (types, their fields, input fields, enum values) multiply them many times over in the
   * answer. The standard introspection query selects 220.
   */
  maxIntrospectionFields: 500,
  /**
   * Field selections in each row (event or group) of a dataset field, counted the same way:
   * a dataset answers up to `limit` rows. All the fields of an event are 28.
   */
  maxRowFields: 50,
  /** Dataset fields (firewallEventsAdaptive*) evaluated per query, over all zones and aliases. */
  maxDatasets: 10,
  /** Zones in one `zones` filter. */
  maxZones: 10,
  /** Characters of the query document. */
  maxQueryChars: 100_000,
  /**
   * Characters of the field values one answer holds, over all datasets, every alias
   * counted: the rows' fields have no size limit of their own (a User-Agent of 8 KB), and
   * aliases repeat them.
   */
  maxAnswerChars: 32_000_000,
} as const;

const gqlType = (f: EventField) => (f.type === 'Int' ? 'Int' : f.type);

/** The events filter's input type: every dataset field takes one. */
const FILTER = 'ZoneFirewallEventsAdaptiveFilter_InputObject';

/**
 * Other names of the events filter a query may declare a variable with: the hosted groups
 * filter, and the names of Cloudflare's tutorial and older clients. They are not types of
 * this schema (each would copy the filter's 130-odd fields into every introspection
 * answer): the document is read as if it named FILTER (readHostedNames), and an error
 * about such a variable shows the type as declared.
 */
const FILTER_ALIASES: ReadonlySet<string> = new Set([
  'ZoneFirewallEventsAdaptiveGroupsFilter_InputObject',
  'FirewallEventsAdaptiveFilter_InputObject',
  'FirewallEventsAdaptiveGroupsFilter_InputObject',
]);

interface HostedScalar {
  /** The schema's own type a variable of this scalar may stand for. */
  readonly of: 'String' | 'Int' | 'Boolean';
  readonly doc: string;
  /** The value, or a GraphQLError saying what the scalar takes. */
  readonly parse: (value: unknown) => unknown;
}

const wholeNumber = (name: string, min: number, max: number) => (value: unknown) => {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return value;
  throw new GraphQLError(`${name} cannot represent ${typeof value === 'string' ? JSON.stringify(value) : String(value)}: it takes a whole number from ${min} to ${max}`);
};

/** A hosted scalar that takes the values of one JavaScript type as they are. */
const ofJsType = (name: string, type: 'string' | 'boolean') => (value: unknown) => {
  if (typeof value === type) return value;
  throw new GraphQLError(`${name} cannot represent a non-${type} value: ${JSON.stringify(value)}`);
};

/**
 * The hosted API's scalar names a variable may be declared with (its docs declare
 * `$zoneTag: string`, `$limit: uint64`), each a scalar of this schema that stands where its
 * `of` type is expected. Numbers are JavaScript's: at most 2^53 - 1.
 */
const HOSTED_SCALARS: Readonly<Record<string, HostedScalar>> = {
  string: { of: 'String', doc: "The hosted API's name for String.", parse: ofJsType('string', 'string') },
  bool: { of: 'Boolean', doc: "The hosted API's name for Boolean.", parse: ofJsType('bool', 'boolean') },
  uint8: { of: 'Int', doc: 'A whole number from 0 to 255 (the hosted uint8).', parse: wholeNumber('uint8', 0, 255) },
  uint16: { of: 'Int', doc: 'A whole number from 0 to 65535 (the hosted uint16).', parse: wholeNumber('uint16', 0, 65_535) },
  uint32: { of: 'Int', doc: 'A whole number from 0 to 4294967295 (the hosted uint32).', parse: wholeNumber('uint32', 0, 4_294_967_295) },
  uint64: { of: 'Int', doc: 'A whole number from 0 (the hosted uint64; here at most 2^53 - 1).', parse: wholeNumber('uint64', 0, Number.MAX_SAFE_INTEGER) },
  int64: { of: 'Int', doc: 'A whole number (the hosted int64; here within ±(2^53 - 1)).', parse: wholeNumber('int64', -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) },
};

/** The schema's own type a declared type name stands for (itself when it is one). */
const canonicalName = (name: string): string => HOSTED_SCALARS[name]?.of ?? (FILTER_ALIASES.has(name) ? FILTER : name);

/**
 * The types a variable may be declared with to stand where `type` is expected, ours first:
 * its shape (lists, `!` inside them) with each name that stands for its named type; the
 * outermost `!` is left to the writer (hostedVariablePositions).
 */
function typesFor(type: GraphQLType): string[] {
  const named = getNamedType(type).name;
  const names = [named, ...[...Object.keys(HOSTED_SCALARS), ...FILTER_ALIASES].filter((a) => canonicalName(a) === named)];
  const shape = (t: GraphQLType, name: string): string => (isNonNullType(t) ? `${shape(t.ofType, name)}!` : isListType(t) ? `[${shape(t.ofType, name)}]` : name);
  return names.map((name) => shape(isNonNullType(type) ? type.ofType : type, name));
}

function filterInput(name: string): string {
  const lines: string[] = [];
  for (const f of FILTER_FIELDS) {
    for (const op of OPERATORS[f.type]!) {
      const list = op === '_in' || op === '_notin';
      lines.push(`  ${f.name}${op}: ${list ? `[${gqlType(f)}!]` : gqlType(f)}`);
    }
  }
  return `input ${name} {\n${lines.join('\n')}\n  AND: [${name}!]\n  OR: [${name}!]\n}`;
}

const orderEnum = (name: string, fields: readonly string[]) => `enum ${name} {\n${fields.flatMap((f) => [`  ${f}_ASC`, `  ${f}_DESC`]).join('\n')}\n}`;
const described = (f: EventField) => `  "${f.doc.replaceAll('"', "'")}"\n  ${f.name}: ${gqlType(f)}!`;

export const SDL = `
"RFC 3339 time, UTC (e.g. 2026-11-26T03:00:00Z)."
scalar Time
"A day, YYYY-MM-DD (UTC)."
scalar Date

type Query {
  viewer: Viewer!
}

${Object.entries(HOSTED_SCALARS)
  .map(([name, s]) => `"${s.doc} A variable declared with it may stand where ${s.of} is expected."\nscalar ${name}`)
  .join('\n')}

type Viewer {
  "The zones named by the filter (at most ${LIMITS.maxZones}) that the credentials may read; without a filter, the zones the credentials may read, by zone tag (the first ${LIMITS.maxZones}: zoneTag_gt pages on)."
  zones(filter: ZoneFilter_InputObject): [Zone!]!
}

input ZoneFilter_InputObject {
  zoneTag: String
  zoneTag_in: [String!]
  "The zones the credentials may read whose tag sorts after this one (the first ${LIMITS.maxZones})."
  zoneTag_gt: String
}

type Zone {
  zoneTag: String!
  "Security events, newest first unless ordered otherwise. The filter needs datetime_geq."
  firewallEventsAdaptive(filter: ZoneFirewallEventsAdaptiveFilter_InputObject!, limit: Int!, orderBy: [ZoneFirewallEventsAdaptiveOrderBy!]): [ZoneFirewallEventsAdaptive!]!
  "Event counts per distinct value of the selected dimensions. The filter needs datetime_geq."
  firewallEventsAdaptiveGroups(filter: ZoneFirewallEventsAdaptiveFilter_InputObject!, limit: Int!, orderBy: [ZoneFirewallEventsAdaptiveGroupsOrderBy!]): [ZoneFirewallEventsAdaptiveGroups!]!
}

${filterInput('ZoneFirewallEventsAdaptiveFilter_InputObject')}

${orderEnum('ZoneFirewallEventsAdaptiveOrderBy', EVENT_ROW_FIELDS.map((f) => f.name))}

${orderEnum('ZoneFirewallEventsAdaptiveGroupsOrderBy', ['count', ...GROUP_DIMENSIONS.map((f) => f.name)])}

type ZoneFirewallEventsAdaptive {
${EVENT_ROW_FIELDS.map(described).join('\n')}
  "Points per attack category (attack-sqli, attack-xss, …) of the managed rules that scored."
  anomalyScores: [AnomalyCategoryScore!]!
  "Fields with no local source that took their default (e.g. ip.src.country)."
  defaultedFields: [String!]!
}

type AnomalyCategoryScore {
  category: String!
  score: Int!
}

type ZoneFirewallEventsAdaptiveGroups {
  count: Int!
  dimensions: ZoneFirewallEventsAdaptiveGroupsDimensions!
}

type ZoneFirewallEventsAdaptiveGroupsDimensions {
${GROUP_DIMENSIONS.map(described).join('\n')}
}
`;

const schema = buildSchema(SDL);
// The hosted scalars' coercion (buildSchema gives a scalar of the SDL no checks of its own).
for (const [name, scalar] of Object.entries(HOSTED_SCALARS)) {
  const type = schema.getType(name);
  if (!isScalarType(type)) throw new Error(`the schema lacks the scalar ${name}`);
  type.parseValue = scalar.parse;
  type.parseLiteral = (node, variables) => scalar.parse(valueFromASTUntyped(node, variables));
  type.serialize = scalar.parse;
}

/** A variable's type as the query declared it, where readHostedNames renamed it. */
const declaredTypes = new WeakMap<VariableDefinitionNode, string>();

/** The document with each variable declared with a FILTER_ALIASES name declared as FILTER instead. */
function readHostedNames(document: DocumentNode): DocumentNode {
  const rename = (type: TypeNode): TypeNode => {
    if (type.kind === Kind.NAMED_TYPE) return FILTER_ALIASES.has(type.name.value) ? ({ ...type, name: { ...type.name, value: FILTER } } satisfies NamedTypeNode) : type;
    const inner = rename(type.type);
    return inner === type.type ? type : ({ ...type, type: inner } as TypeNode);
  };
  let changed = false;
  const definitions = document.definitions.map((d) => {
    if (d.kind !== Kind.OPERATION_DEFINITION || !d.variableDefinitions?.length) return d;
    const variableDefinitions = d.variableDefinitions.map((v) => {
      const type = rename(v.type);
      if (type === v.type) return v;
      changed = true;
      const renamed: VariableDefinitionNode = { ...v, type };
      declaredTypes.set(renamed, print(v.type));
      return renamed;
    });
    return { ...d, variableDefinitions };
  });
  return changed ? { ...document, definitions } : document;
}

/** Whether a variable of type `declared` fits where `expected` is: the schema's subtyping, each hosted name standing for its own type. */
function fits(declared: GraphQLType, expected: GraphQLType): boolean {
  if (isNonNullType(expected)) return isNonNullType(declared) && fits(declared.ofType, expected.ofType);
  if (isNonNullType(declared)) return fits(declared.ofType, expected);
  if (isListType(expected)) return isListType(declared) && fits(declared.ofType, expected.ofType);
  return !isListType(declared) && canonicalName(declared.name) === canonicalName(expected.name);
}

/**
 * VariablesInAllowedPositionRule as the hosted API applies it: a variable declared with a
 * hosted name stands where its own type is expected, and a variable without `!` may stand
 * where a value is required (the argument then fails when it is null or missing, with its
 * own error). Anything else is the standard error, naming the variable, its type as
 * declared and the type expected, and which names fit there.
 */
const hostedVariablePositions: ValidationRule = (context) => {
  let definitions = new Map<string, VariableDefinitionNode>();
  return {
    OperationDefinition: {
      enter() {
        definitions = new Map();
      },
      leave(operation) {
        for (const { node, type: expected } of context.getRecursiveVariableUsages(operation)) {
          const definition = definitions.get(node.name.value);
          const declared = definition ? typeFromAST(context.getSchema(), definition.type) : undefined;
          if (!definition || !declared || !expected) continue;
          const where = isNonNullType(expected) && !isNonNullType(declared) ? expected.ofType : expected;
          if (fits(declared, where)) continue;
          const types = typesFor(expected);
          context.reportError(
            new GraphQLError(
              `Variable "$${node.name.value}" of type "${declaredTypes.get(definition) ?? print(definition.type)}" used in position expecting type "${String(expected)}"${
                types.length > 1 ? `; declare it ${types.slice(0, -1).join(', ')} or ${types.at(-1)}` : ''
              }.`,
              { nodes: [definition, node] },
            ),
          );
        }
      },
    },
    VariableDefinition(node) {
      definitions.set(node.variable.name.value, node);
    },
  };
};

const VALIDATION_RULES = [...specifiedRules.filter((r) => r !== VariablesInAllowedPositionRule), hostedVariablePositions];

interface Context {
  readonly store: Store;
  readonly events: EventReader;
  readonly principal: Principal;
  readonly now: number;
  datasets: number;
  /** Characters of field values answered so far (LIMITS.maxAnswerChars). */
  answerChars: number;
}

export interface GraphqlRequest {
  readonly query?: unknown;
  readonly variables?: unknown;
  readonly operationName?: unknown;
}

export interface GraphqlResponse {
  readonly data?: unknown;
  readonly errors?: readonly unknown[];
}

/** Runs one GraphQL request; every failure is in `errors` (`internal` logs a bug's stack). */
export async function runGraphql(store: Store, events: EventReader, principal: Principal, body: GraphqlRequest, internal: (e: Error) => void = () => {}, now = Date.now()): Promise<GraphqlResponse> {
  const fail = (message: string, code: string): GraphqlResponse => ({ errors: [{ message, extensions: { code } }] });
  if (typeof body.query !== 'string') return fail('the request needs "query": a GraphQL document as a string (and optionally "variables": an object)', 'BAD_REQUEST');
  if (body.variables !== undefined && body.variables !== null && (typeof body.variables !== 'object' || Array.isArray(body.variables))) {
    return fail('"variables" must be an object of variable values', 'BAD_REQUEST');
  }
  if (body.operationName !== undefined && body.operationName !== null && typeof body.operationName !== 'string') return fail('"operationName" must be a string', 'BAD_REQUEST');
  if (body.query.length > LIMITS.maxQueryChars) return fail(`the query is ${body.query.length} characters; the limit is ${LIMITS.maxQueryChars}`, 'QUERY_TOO_LARGE');
  let document: DocumentNode;
  try {
    document = parse(body.query, { maxTokens: 20_000 });
  } catch (e) {
    if (e instanceof GraphQLError) return { errors: [e.toJSON()] };
    // The parser recursed past the stack: only a pathologically nested document does that.
    return fail(`the query is nested too deeply to parse; the limit is ${LIMITS.maxDepth} levels`, 'QUERY_TOO_DEEP');
  }
  // Before validation, so a deeply nested or alias-multiplied document costs no validation work.
  let depth: number;
  let width: Width = { fields: 0, introspection: 0 };
  try {
    depth = queryDepth(document);
    if (depth <= LIMITS.maxDepth) width = queryWidth(document, body.operationName ?? undefined);
  } catch (e) {
    // Only a chain of fragments spreading each other thousands deep recurses past the stack.
    if (!(e instanceof RangeError)) throw e;
    depth = Infinity;
  }
  if (depth > LIMITS.maxDepth) {
    return fail(depth === Infinity ? 'the query\'s fragments spread each other in a cycle' : `the query is nested more than ${LIMITS.maxDepth} levels deep; the limit is ${LIMITS.maxDepth}`, 'QUERY_TOO_DEEP');
  }
  if (width.fields > LIMITS.maxFields) {
    return fail(
      `the query selects ${countText(width.fields)} fields (fragments expanded, every alias counted); the limit is ${LIMITS.maxFields}: use fewer aliases and fragment spreads, or split the query`,
      'QUERY_TOO_WIDE',
    );
  }
  if (width.introspection > LIMITS.maxIntrospectionFields) {
    return fail(
      `the query's introspection (__schema, __type) selects ${countText(width.introspection)} fields (fragments expanded, every alias counted); the limit is ${LIMITS.maxIntrospectionFields}: use fewer aliases and fragment spreads (the standard introspection query selects 220)`,
      'QUERY_TOO_WIDE',
    );
  }
  document = readHostedNames(document);
  const invalid = validate(schema, document, VALIDATION_RULES);
  if (invalid.length > 0) return { errors: invalid.map((e) => withSchemaHint(e.toJSON())) };
  const context: Context = { store, events, principal, now, datasets: 0, answerChars: 0 };
  const result = await execute({
    schema,
    document,
    rootValue: { viewer: () => viewer },
    contextValue: context,
    variableValues: (body.variables ?? undefined) as Record<string, unknown> | undefined,
    operationName: (body.operationName ?? undefined) as string | undefined,
  });
  const errors = result.errors?.map((e) => {
    // graphql-js passes on some failures of its own as plain errors (no toJSON).
    if (!(e instanceof GraphQLError)) {
      internal(e);
      return { message: 'internal error; see the rules service log', extensions: { code: 'INTERNAL' } };
    }
    if (e.originalError && !(e.originalError instanceof GraphQLError)) {
      internal(e.originalError);
      return { ...e.toJSON(), message: 'internal error; see the rules service log', extensions: { code: 'INTERNAL' } };
    }
    return e.toJSON();
  });
  return { ...(result.data !== undefined ? { data: result.data } : {}), ...(errors ? { errors } : {}) };
}

/**
 * A query copied from the hosted API may ask for what this schema lacks (another dataset,
 * `sampleInterval`, an account-level view): graphql-js says the field is unknown, and this
 * adds that the local endpoint has a subset, and where it is listed.
 */
function withSchemaHint<E extends { message: string }>(e: E): E {
  if (!/^Cannot query field "/.test(e.message)) return e;
  return { ...e, message: `${e.message} This local endpoint has a subset of the hosted schema: the datasets, fields and filters it has are listed in docs/events.md ("GraphQL API"), and introspection lists them too.` };
}

interface ZoneFilter {
  readonly zoneTag?: string | null;
  readonly zoneTag_in?: readonly string[] | null;
  readonly zoneTag_gt?: string | null;
}

/** Whether the credentials may read the zone's analytics. */
const readable = (principal: Principal, zone: ZoneRow) => allowed(principal, { accountId: zone.account_id, zoneId: zone.id }, ['Zone Analytics', 'Zone'], 'Read');

const viewer = {
  zones(args: { filter?: ZoneFilter | null }, ctx: Context): unknown[] {
    const filter = args.filter;
    // No filter: every zone the credentials may read, as the hosted API answers it.
    if (filter === undefined || filter === null) return readableZones(ctx);
    const ids = [...(filter.zoneTag !== undefined && filter.zoneTag !== null ? [filter.zoneTag] : []), ...(filter.zoneTag_in ?? [])];
    if (filter.zoneTag_gt !== undefined && filter.zoneTag_gt !== null) {
      if (ids.length > 0) throw bad('zones: the filter takes one of zoneTag, zoneTag_in or zoneTag_gt, not zoneTag_gt with another');
      return readableZones(ctx, filter.zoneTag_gt);
    }
    if (ids.length === 0) {
      throw bad(
        'zones: the filter names no zone; write zones(filter: {zoneTag: "<zone id>"}) (or zoneTag_in: ["<zone id>", …], or zoneTag_gt: "<zone id>" for the zones after it), or leave the filter out for every zone these credentials may read',
      );
    }
    if (ids.length > LIMITS.maxZones) throw bad(`zones: ${ids.length} zones asked for; the limit is ${LIMITS.maxZones} per query`, 'LIMIT_EXCEEDED');
    return [...new Set(ids)].map((id) => {
      const zone = ctx.store.get<ZoneRow>(`${ZONE_SELECT} WHERE z.id = ?`, [id]);
      if (!zone || !readable(ctx.principal, zone)) {
        throw new GraphQLError(`zone '${id}' does not exist or these credentials may not read its analytics (needs Zone Analytics Read or Zone Read)`, { extensions: { code: 'authz' } });
      }
      return zoneObject(zone.id);
    });
  },
};

/** The zones the credentials may read (whose tag sorts after `after`), by zone tag: the first LIMITS.maxZones. */
function readableZones(ctx: Context, after?: string): unknown[] {
  const rows = after === undefined ? ctx.store.all<ZoneRow>(`${ZONE_SELECT} ORDER BY z.id`) : ctx.store.all<ZoneRow>(`${ZONE_SELECT} WHERE z.id > ? ORDER BY z.id`, [after]);
  return rows
    .filter((zone) => readable(ctx.principal, zone))
    .slice(0, LIMITS.maxZones)
    .map((zone) => zoneObject(zone.id));
}

interface DatasetArgs {
  readonly filter: Filter;
  readonly limit: number;
  readonly orderBy?: readonly string[] | null;
}

function zoneObject(zoneId: string) {
  return {
    zoneTag: zoneId,
    async firewallEventsAdaptive(args: DatasetArgs, ctx: Context, info: GraphQLResolveInfo) {
      checkDataset(args, ctx, info);
      const selected = selections(info.fieldNodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : [])), info);
      const fields = [...selected.keys()].filter((n) => EVENT_ROW_FIELDS.some((f) => f.name === n));
      const rows = await listEvents(ctx.events, { zoneId, filter: args.filter, limit: args.limit, orderBy: args.orderBy ?? ['datetime_DESC'], fields }).catch(asBadInput);
      return answered(ctx, info, rows, selected);
    },
    async firewallEventsAdaptiveGroups(args: DatasetArgs, ctx: Context, info: GraphQLResolveInfo) {
      const range = checkDataset(args, ctx, info);
      const top = selections(info.fieldNodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : [])), info);
      const selected = selections(top.get('dimensions')?.sets ?? [], info);
      const dimensions = [...selected.keys()].filter((n) => GROUP_DIMENSIONS.some((f) => f.name === n));
      const groups = await groupEvents(ctx.events, { zoneId, filter: args.filter, range, limit: args.limit, orderBy: args.orderBy ?? [], dimensions }).catch(asBadInput);
      answered(ctx, info, groups.map((g) => g.dimensions), selected);
      return groups;
    },
  };
}

function checkDataset(args: DatasetArgs, ctx: Context, info: GraphQLResolveInfo): { from: number; to: number } {
  if (++ctx.datasets > LIMITS.maxDatasets) throw bad(`${info.fieldName}: more than ${LIMITS.maxDatasets} datasets in one query (over all zones and aliases); split the query`, 'LIMIT_EXCEEDED');
  // Every row answers each of these selections: `limit` rows multiply them.
  const count = widthCounter((name) => info.fragments[name]);
  const rowFields = info.fieldNodes.reduce((n, node) => n + (node.selectionSet ? count(node.selectionSet).fields : 0), 0);
  if (rowFields > LIMITS.maxRowFields) {
    throw bad(`${info.fieldName}: each row selects ${countText(rowFields)} fields (fragments expanded, every alias counted); the limit is ${LIMITS.maxRowFields}: use fewer aliases`, 'QUERY_TOO_WIDE');
  }
  if (args.limit < 1 || args.limit > LIMITS.maxLimit) throw bad(`${info.fieldName}: limit must be from 1 to ${LIMITS.maxLimit}, got ${args.limit}`, 'LIMIT_EXCEEDED');
  try {
    return timeRange(args.filter, ctx.now, LIMITS.maxRangeMs);
  } catch (e) {
    return asBadInput(e);
  }
}

/** A QueryError (bad input the SQL layer found) as a GraphQL error. */
/** A QueryError (a filter, range or order the events cannot be read by) is the client's: a GraphQL BAD_INPUT error. */
function asBadInput(e: unknown): never {
  if (e instanceof QueryError) throw bad(e.message);
  throw e;
}

function bad(message: string, code = 'BAD_INPUT'): GraphQLError {
  return new GraphQLError(message, { extensions: { code } });
}

/** A field selected: how many times (aliases and repeats), and its own selection sets. */
interface Selected {
  times: number;
  readonly sets: SelectionSetNode[];
}

/** The fields selected in these selection sets (through fragments; not those `@skip`ped or not `@include`d). */
function selections(sets: readonly SelectionSetNode[], info: Pick<GraphQLResolveInfo, 'fragments' | 'variableValues'>): Map<string, Selected> {
  const out = new Map<string, Selected>();
  const included = (node: { readonly directives?: readonly unknown[] }) =>
    getDirectiveValues(GraphQLSkipDirective, node as FieldNode, info.variableValues)?.if !== true && getDirectiveValues(GraphQLIncludeDirective, node as FieldNode, info.variableValues)?.if !== false;
  const visit = (set: SelectionSetNode) => {
    for (const s of set.selections) {
      if (!included(s)) continue;
      if (s.kind === Kind.FIELD) {
        const seen = out.get(s.name.value) ?? { times: 0, sets: [] };
        seen.times++;
        if (s.selectionSet) seen.sets.push(s.selectionSet);
        out.set(s.name.value, seen);
      } else if (s.kind === Kind.INLINE_FRAGMENT) visit(s.selectionSet);
      else {
        const f = info.fragments[s.name.value];
        if (f) visit(f.selectionSet);
      }
    }
  };
  sets.forEach(visit);
  return out;
}

/** `rows` as answered: their field values, each as many times as it is selected, count toward LIMITS.maxAnswerChars. */
function answered<R extends Record<string, unknown>>(ctx: Context, info: GraphQLResolveInfo, rows: R[], selected: ReadonlyMap<string, Selected>): R[] {
  let chars = 0;
  for (const row of rows) for (const [name, s] of selected) if (typeof row[name] === 'string') chars += (row[name] as string).length * s.times;
  ctx.answerChars += chars;
  if (ctx.answerChars > LIMITS.maxAnswerChars) {
    throw bad(
      `${info.fieldName}: the answer would hold more than ${LIMITS.maxAnswerChars / 1_000_000} million characters of field values (every alias counted); lower limit, select fewer fields or aliases, or split the query`,
      'RESULT_TOO_LARGE',
    );
  }
  return rows;
}

/**
 * The deepest field nesting of the document's operations, introspection's `__` fields
 * included (each counts like any other field). Each fragment is measured once
 * (a document spreading fragments into fragments costs no more than its size), and a
 * fragment cycle counts as too deep (validation, which runs after, would refuse it too).
 */
function queryDepth(document: DocumentNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const measured = new Map<string, number>();
  const depth = (set: SelectionSetNode | undefined, level = 0): number => {
    // Past the limit the exact depth does not matter: stop before a deep document exhausts the stack.
    if (!set || level > LIMITS.maxDepth) return 0;
    let max = 0;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) max = Math.max(max, 1 + depth(s.selectionSet, level + 1));
      else if (s.kind === Kind.INLINE_FRAGMENT) max = Math.max(max, depth(s.selectionSet, level));
      else {
        const name = s.name.value;
        if (!measured.has(name)) {
          measured.set(name, Infinity);
          measured.set(name, depth(fragments.get(name)?.selectionSet));
        }
        max = Math.max(max, measured.get(name)!);
      }
    }
    return max;
  };
  let max = 0;
  for (const d of document.definitions) if (d.kind === Kind.OPERATION_DEFINITION) max = Math.max(max, depth(d.selectionSet));
  return max;
}

interface Width {
  /** Field selections, introspection's included. */
  readonly fields: number;
  /** Those inside `__schema` / `__type`. */
  readonly introspection: number;
}

const countText = (n: number) => (Number.isSafeInteger(n) ? String(n) : `more than ${Number.MAX_SAFE_INTEGER}`);

/**
 * Counts the field selections of a selection set (LIMITS.maxFields): each field occurrence
 * counts 1 plus its selection, a fragment spread counts its fragment, so aliases repeated
 * through fragments multiply as they would in execution (a list's items are not counted).
 * Each fragment is counted once and its count reused, so the work follows the document's
 * size whatever the count comes to; a fragment cycle counts as infinite (queryDepth refuses
 * it first).
 */
function widthCounter(fragment: (name: string) => FragmentDefinitionNode | undefined): (set: SelectionSetNode) => Width {
  const counted = new Map<string, Width>();
  const INFINITE: Width = { fields: Infinity, introspection: Infinity };
  const width = (set: SelectionSetNode): Width => {
    let fields = 0;
    let introspection = 0;
    const add = (w: Width) => {
      fields += w.fields;
      introspection += w.introspection;
    };
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        const inner = s.selectionSet ? width(s.selectionSet) : { fields: 0, introspection: 0 };
        const name = s.name.value;
        add({ fields: 1 + inner.fields, introspection: name === '__schema' || name === '__type' ? 1 + inner.fields : inner.introspection });
      } else if (s.kind === Kind.INLINE_FRAGMENT) add(width(s.selectionSet));
      else {
        const name = s.name.value;
        if (!counted.has(name)) {
          counted.set(name, INFINITE);
          const f = fragment(name);
          counted.set(name, f ? width(f.selectionSet) : { fields: 0, introspection: 0 });
        }
        add(counted.get(name)!);
      }
    }
    return { fields, introspection };
  };
  return width;
}

/** The width of the operation `operationName` names, else of the widest of the document's (execution runs one). */
function queryWidth(document: DocumentNode, operationName: unknown): Width {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const width = widthCounter((name) => fragments.get(name));
  const operations = document.definitions.filter((d) => d.kind === Kind.OPERATION_DEFINITION);
  const named = typeof operationName === 'string' ? operations.filter((o) => o.name?.value === operationName) : [];
  const widths = (named.length > 0 ? named : operations).map((o) => width(o.selectionSet));
  return { fields: Math.max(0, ...widths.map((w) => w.fields)), introspection: Math.max(0, ...widths.map((w) => w.introspection)) };
}

/**
 * A small typed wrapper over the wirefilter engine that the `firewalker` package ships
 * (`lib/libwirefilter_ffi.so`, wirefilter-ffi 0.7.0 at cloudflare/wirefilter commit
 * 2334ab15 plus firewalker's three patches), used as the oracle of the differential
 * tests and of check.bench.ts's parse timing (evaluate.bench.ts calls the library from C).
 *
 * We do not go through firewalker's `Firewall` class: it builds a whole execution context
 * from an HTTP request, reads the engine's error text as a NUL-terminated C string (the
 * engine's strings are not NUL-terminated, so it picks up trailing garbage) and does not
 * keep the byte buffers it hands to the engine alive. Instead we declare the C functions
 * ourselves (from the header that firewalker's `dist/wirefilter.js` transcribes) and call
 * them through the native modules firewalker depends on (`@2060.io/ffi-napi`'s libffi
 * binding, `ref-napi`, `ref-struct-di`), resolved from firewalker's own directory, with
 * argument storage allocated once per function (see `native` below: ffi-napi's own call
 * path allocates per argument and made each call cost tens of microseconds).
 *
 * The scheme registered here is exactly firewalker's (`dist/firewall.js`, class
 * `Firewall`): the fields in FIREWALKER_FIELDS, the functions its patched FFI adds in
 * `add_standard_functions` (FIREWALKER_FUNCTIONS) and list types for Int (an int list
 * store), Ip (an ip list store) and Bytes (never matches). Any lowercase `$name` parses;
 * every execution context gets empty list stores, as firewalker does when no list content
 * is given, so `x in $name` is always false.
 *
 * Facts about this engine build that bound what can be compared (checked by probing):
 *   - Int is 32-bit (`i32`): literals outside ±2^31 are parse errors, values are int32;
 *   - no raw strings `r"…"`, no `wildcard` / `strict wildcard` operators;
 *   - `any` / `all` are functions of an Array<Bool> field argument (not quantifiers);
 *   - `\xHH` / `\OOO` string escapes yield the code point U+00HH encoded as UTF-8;
 *   - `m[*]` lists map values in hash-map order, which differs from one context to the next;
 *   - a field used by a filter MUST be given a value: an absent field makes the engine
 *     panic ("Field X was registered but not given a value"). We install the engine's
 *     panic catcher so that this (and the panics of firewalker's `substring` patch)
 *     comes back as an error result instead of aborting the process. Absent values can
 *     still be produced through map keys and array indexes.
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The field types occurring in firewalker's scheme (wirefilter display names). */
export type FieldType = 'Bytes' | 'Int' | 'Bool' | 'Ip' | 'Array<Bytes>' | 'Array<Int>' | 'Map<Array<Bytes>>';

/** firewalker 1.0.10 `Firewall` constructor, in registration order. */
export const FIREWALKER_FIELDS: ReadonlyArray<readonly [string, FieldType]> = [
  ['http.cookie', 'Bytes'],
  ['http.host', 'Bytes'],
  ['http.referer', 'Bytes'],
  ['http.request.full_uri', 'Bytes'],
  ['http.request.method', 'Bytes'],
  ['http.request.cookies', 'Map<Array<Bytes>>'],
  ['http.request.uri', 'Bytes'],
  ['http.request.uri.path', 'Bytes'],
  ['http.request.uri.path.extension', 'Bytes'],
  ['http.request.uri.query', 'Bytes'],
  ['http.user_agent', 'Bytes'],
  // NB: Int here; the reference (§4.1) and Cloudflare say Bytes ("HTTP/1.1").
  ['http.request.version', 'Int'],
  ['http.x_forwarded_for', 'Bytes'],
  ['ip.src', 'Ip'],
  ['ip.src.lat', 'Bytes'],
  ['ip.src.lon', 'Bytes'],
  ['ip.src.city', 'Bytes'],
  ['ip.src.postal_code', 'Bytes'],
  ['ip.src.metro_code', 'Bytes'],
  ['ip.src.region', 'Bytes'],
  ['ip.src.region_code', 'Bytes'],
  ['ip.src.asnum', 'Int'],
  ['ip.src.continent', 'Bytes'],
  ['ip.src.country', 'Bytes'],
  ['ip.src.subdivision_1_iso_code', 'Bytes'],
  ['ip.src.subdivision_2_iso_code', 'Bytes'],
  ['ip.src.is_in_european_union', 'Bool'],
  ['ip.geoip.asnum', 'Int'],
  ['ip.geoip.continent', 'Bytes'],
  ['ip.geoip.country', 'Bytes'],
  ['ip.geoip.subdivision_1_iso_code', 'Bytes'],
  ['ip.geoip.subdivision_2_iso_code', 'Bytes'],
  ['ip.geoip.is_in_european_union', 'Bool'],
  ['ssl', 'Bool'],
  ['http.request.uri.args', 'Map<Array<Bytes>>'],
  ['http.request.uri.args.names', 'Array<Bytes>'],
  ['http.request.uri.args.values', 'Array<Bytes>'],
  ['http.request.headers', 'Map<Array<Bytes>>'],
  ['http.request.headers.names', 'Array<Bytes>'],
  ['http.request.headers.values', 'Array<Bytes>'],
  ['http.request.headers.truncated', 'Bool'],
  ['http.request.body.raw', 'Bytes'],
  ['http.request.body.truncated', 'Bool'],
  ['http.request.body.size', 'Int'],
  ['http.request.body.form', 'Map<Array<Bytes>>'],
  ['http.request.body.form.names', 'Array<Bytes>'],
  ['http.request.body.form.values', 'Array<Bytes>'],
  ['http.request.body.mime', 'Bytes'],
  ['cf.bot_management.ja3_hash', 'Bytes'],
  ['cf.bot_management.ja4', 'Bytes'],
  ['cf.bot_management.js_detection.passed', 'Bool'],
  ['cf.bot_management.detection_ids', 'Array<Int>'],
  ['cf.bot_management.score', 'Int'],
  ['cf.bot_management.static_resource', 'Bool'],
  ['cf.bot_management.verified_bot', 'Bool'],
  ['cf.bot_management.corporate_proxy', 'Bool'],
  ['cf.ray_id', 'Bytes'],
  ['cf.threat_score', 'Int'],
  ['cf.edge.server_port', 'Int'],
  ['cf.client.bot', 'Bool'],
  ['cf.client_trust_score', 'Int'],
  ['cf.verified_bot_category', 'Bytes'],
  ['cf.waf.score', 'Int'],
  ['cf.waf.score.sqli', 'Int'],
  ['cf.waf.score.xss', 'Int'],
  ['cf.waf.score.rce', 'Int'],
  ['cf.waf.score.class', 'Bytes'],
  ['cf.worker.upstream_zone', 'Bytes'],
];

/**
 * Functions registered by firewalker's patched `add_standard_functions` (patches 0001 and
 * 0003). Kinds: F = must be a field/expression, L = must be a literal.
 */
export const FIREWALKER_FUNCTIONS: ReadonlyArray<{ readonly name: string; readonly signature: string; readonly note: string }> = [
  { name: 'any', signature: 'any(F Array<Bool>) -> Bool', note: 'a function in this build, not a quantifier' },
  { name: 'all', signature: 'all(F Array<Bool>) -> Bool', note: 'a function in this build, not a quantifier' },
  { name: 'lower', signature: 'lower(F Bytes) -> Bytes', note: 'ASCII only' },
  { name: 'upper', signature: 'upper(F Bytes) -> Bytes', note: 'ASCII only' },
  { name: 'len', signature: 'len(F Bytes) -> Int', note: 'Bytes only (no arrays)' },
  { name: 'url_decode', signature: 'url_decode(F Bytes) -> Bytes', note: "percent-decoding only: '+' stays '+', no options argument" },
  { name: 'starts_with', signature: 'starts_with(F Bytes, L Bytes) -> Bool', note: '' },
  { name: 'ends_with', signature: 'ends_with(F Bytes, L Bytes) -> Bool', note: '' },
  { name: 'remove_bytes', signature: 'remove_bytes(F Bytes, L Bytes) -> Bytes', note: '' },
  {
    name: 'substring',
    signature: 'substring(F Bytes, L Int [, L Int = 0]) -> Bytes',
    note: 'end <= 0 counts from the end (so 0 = whole length); panics when start >= end or end > len',
  },
];

export type ParseOutcome = { readonly ok: true } | { readonly ok: false; readonly message: string };

/** A compiled filter, run on a prepared execution context. */
export interface WirefilterFilter {
  /** Runs the filter on a prepared context. Throws WirefilterError on an engine error. */
  matchContext(ctx: WirefilterContext): boolean;
}

/** An execution context holding field values; free it when done. */
export interface WirefilterContext {
  free(): void;
}

export interface Wirefilter {
  /** The engine's version string (`wirefilter_get_version`). */
  readonly version: string;
  readonly fields: ReadonlyMap<string, FieldType>;
  /**
   * Parses a filter expression (every call really parses; nothing is cached, so it can be
   * timed); the message is the engine's own error text.
   */
  parse(expr: string): ParseOutcome;
  /**
   * Parses and compiles, caching the compiled filter for `match` / `compile`: what the
   * differential tests use to decide accept / reject.
   */
  check(expr: string): ParseOutcome;
  /**
   * Executes `expr` against the given field values. Values are JSON-like: strings (UTF-8
   * encoded) or Uint8Array for Bytes, numbers (int32) for Int, "192.0.2.1" / "2001:db8::1"
   * for Ip, booleans, string arrays, number arrays, and objects of string arrays for
   * maps. Every field the expression uses must be given (see `usedFields`). Throws when
   * the expression does not parse, a value does not fit, or the engine reports an error.
   */
  match(expr: string, fields: Readonly<Record<string, unknown>>): boolean;
  /** Scheme fields named in the expression text (an over-approximation of what it uses). */
  usedFields(expr: string): string[];
  /** Compiles `expr` (cached); throws when it does not parse. */
  compile(expr: string): WirefilterFilter;
  /**
   * Builds an execution context from field values. `lists: false` skips setting up the
   * (empty) list stores, which costs a few FFI calls; only filters using `$list` need them.
   */
  context(fields: Readonly<Record<string, unknown>>, options?: { readonly lists?: boolean }): WirefilterContext;
  /** Frees every cached filter. The wrapper must not be used afterwards. */
  close(): void;
}

/** An error reported by the engine (e.g. a caught panic), or a value it cannot take. */
export class WirefilterError extends Error {}

// ---------------------------------------------------------------------------------------
// Minimal typings for the untyped native modules.

/** A `ref` type descriptor; opaque here. */
type RefType = { readonly size: number } & object;

interface RefModule {
  readonly types: { readonly [name: string]: RefType };
  readPointer(buffer: Buffer, offset: number, size: number): Buffer;
  address(buffer: Buffer): number;
  _writePointer(buffer: Buffer, offset: number, pointer: Buffer): void;
}

type StructFactory = (ref: RefModule) => (fields: Record<string, RefType>) => RefType;

interface FfiModule {
  CIF(returnType: RefType, argTypes: RefType[]): Buffer;
  DynamicLibrary: new (path: string, mode?: number) => { get(symbol: string): Buffer };
}

interface FfiBindings {
  ffi_call(cif: Buffer, fn: Buffer, result: Buffer, argv: Buffer): void;
}

/**
 * One C function, called through libffi with storage allocated once: the caller writes
 * the arguments into `args[i]`, calls `call()`, and reads the return value from `result`.
 *
 * (ffi-napi's own call path allocates a Buffer per argument, per call, and attaches them
 * for the garbage collector; with the thousands of calls a differential run makes, that
 * costs more than the engine itself.)
 */
interface NativeFn {
  readonly args: readonly Buffer[];
  readonly result: Buffer;
  call(): void;
}

/**
 * The engine's result unions, all `#[repr(u8)]` Rust enums (24 bytes): byte 0 is 1 for
 * Ok; Ok(bool) keeps its value at byte 1; Ok(pointer) keeps it at offset 8; Err keeps a
 * Rust-allocated string `{ ptr, len }` at offsets 8 and 16.
 */
const RESULT_SIZE = 24;
/** `wirefilter_type_t { uint8_t tag; void *data; }` (16 bytes). */
const TYPE_SIZE = 16;

const TAG = { Ip: 0, Bytes: 1, Int: 2, Bool: 3 } as const;

function w64(buf: Buffer, value: number, offset = 0): void {
  buf.writeUInt32LE(value >>> 0, offset);
  buf.writeUInt32LE(Math.floor(value / 4294967296) >>> 0, offset + 4);
}

function r64(buf: Buffer, offset = 0): number {
  return buf.readUInt32LE(offset) + buf.readUInt32LE(offset + 4) * 4294967296;
}

function describe(e: unknown): string {
  return e instanceof Error ? e.message.split('\n')[0] : String(e);
}

/** Loads the engine. Never throws: returns `{ unavailable: reason }` when it cannot. */
export function loadWirefilter(): Wirefilter | { unavailable: string } {
  try {
    return load();
  } catch (e) {
    return { unavailable: describe(e) };
  }
}

/**
 * Memory handed to the engine for one call or one execution context: bytes are copied
 * into Buffers that stay referenced (and so alive) as long as the owner needs them; the
 * engine borrows byte values from them rather than copying.
 */
class Arena {
  private readonly chunks: Buffer[] = [];

  constructor(private readonly ref: RefModule) {}

  /** Copies `bytes` and returns the address of the copy. */
  put(bytes: Uint8Array): number {
    const buf = Buffer.allocUnsafe(Math.max(1, bytes.length));
    buf.set(bytes);
    this.chunks.push(buf);
    return this.ref.address(buf);
  }

  release(): void {
    this.chunks.length = 0;
  }
}

function load(): Wirefilter {
  const here = createRequire(import.meta.url);
  let fwDir: string;
  try {
    fwDir = dirname(here.resolve('firewalker/package.json'));
  } catch (e) {
    throw new Error(`the firewalker package is not installed (${describe(e)})`);
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`firewalker ships libwirefilter_ffi.so for linux-x64 only (this is ${process.platform}-${process.arch})`);
  }
  const libPath = join(fwDir, 'lib', 'libwirefilter_ffi.so');
  if (!existsSync(libPath)) throw new Error(`${libPath} is missing`);
  // Resolve the native modules the way firewalker itself does.
  const fwRequire = createRequire(join(fwDir, 'package.json'));
  const ffi = fwRequire('@2060.io/ffi-napi') as FfiModule;
  const bindings = fwRequire('@2060.io/ffi-napi/lib/bindings') as FfiBindings;
  const ref = fwRequire('ref-napi') as RefModule;
  const Struct = (fwRequire('ref-struct-di') as StructFactory)(ref);

  const t = ref.types;
  const u64 = t.uint64;
  // Struct layouts only matter to libffi (size, alignment, register classes).
  const ResultT = Struct({ success: t.uint8, flag: t.uint8, ptr: u64, len: u64 });
  const TypeT = Struct({ tag: t.uint8, data: u64 });
  const StrT = Struct({ data: u64, length: u64 });

  const dl = new ffi.DynamicLibrary(libPath);
  const native = (name: string, ret: RefType, args: RefType[]): NativeFn => {
    const cif = ffi.CIF(ret, args);
    const fn = dl.get(name);
    const result = Buffer.alloc(Math.max(8, ret.size));
    const storage = args.map((a) => Buffer.alloc(Math.max(8, a.size)));
    const argv = Buffer.alloc(8 * Math.max(1, args.length));
    storage.forEach((s, i) => ref._writePointer(argv, 8 * i, s));
    return { args: storage, result, call: () => bindings.ffi_call(cif, fn, result, argv) };
  };

  /*
   * The C API passes `{ const char *data; size_t length; }` by value in most calls. Under
   * the x86-64 System V ABI (the only platform this loader accepts) such a 16-byte struct
   * of two INTEGER-class words travels in two consecutive integer registers, exactly like
   * two separate arguments, as long as registers remain (every call here needs at most
   * six). So each is declared as two uint64 arguments: address and length. Opaque engine
   * pointers are carried as uint64 numbers.
   */
  const f = {
    version: native('wirefilter_get_version', StrT, []),
    hook: native('wirefilter_set_panic_catcher_hook', t.void, []),
    enableCatcher: native('wirefilter_enable_panic_catcher', t.void, []),
    fallbackMode: native('wirefilter_set_panic_catcher_fallback_mode', ResultT, [t.uint8]),
    createScheme: native('wirefilter_create_scheme', u64, []),
    arrayType: native('wirefilter_create_array_type', TypeT, [TypeT]),
    mapType: native('wirefilter_create_map_type', TypeT, [TypeT]),
    addField: native('wirefilter_add_type_field_to_scheme', t.bool, [u64, u64, u64, TypeT]),
    addFunctions: native('add_standard_functions', t.void, [u64]),
    parse: native('wirefilter_parse_filter', ResultT, [u64, u64, u64]),
    freeParse: native('wirefilter_free_parsing_result', t.void, [ResultT]),
    freeAst: native('wirefilter_free_filter_ast', t.void, [u64]),
    compile: native('wirefilter_compile_filter', ResultT, [u64]),
    freeCompile: native('wirefilter_free_compiling_result', t.void, [ResultT]),
    freeFilter: native('wirefilter_free_compiled_filter', t.void, [u64]),
    createCtx: native('wirefilter_create_execution_context', u64, [u64]),
    freeCtx: native('wirefilter_free_execution_context', t.void, [u64]),
    neverLists: native('set_all_lists_to_nevermatch', t.bool, [u64]),
    intLists: native('wirefilter_setup_int_lists', t.void, [u64, u64]),
    ipLists: native('wirefilter_setup_ip_lists', t.void, [u64, u64]),
    ctxInt: native('wirefilter_add_int_value_to_execution_context', t.bool, [u64, u64, u64, t.int32]),
    ctxBytes: native('wirefilter_add_bytes_value_to_execution_context', t.bool, [u64, u64, u64, u64, u64]),
    ctxIpv4: native('wirefilter_add_ipv4_value_to_execution_context', t.bool, [u64, u64, u64, u64]),
    ctxIpv6: native('wirefilter_add_ipv6_value_to_execution_context', t.bool, [u64, u64, u64, u64]),
    ctxBool: native('wirefilter_add_bool_value_to_execution_context', t.bool, [u64, u64, u64, t.bool]),
    ctxMap: native('wirefilter_add_map_value_to_execution_context', t.bool, [u64, u64, u64, u64]),
    ctxArray: native('wirefilter_add_array_value_to_execution_context', t.bool, [u64, u64, u64, u64]),
    createMap: native('wirefilter_create_map', u64, [TypeT]),
    mapArray: native('wirefilter_add_array_value_to_map', t.bool, [u64, u64, u64, u64]),
    createArray: native('wirefilter_create_array', u64, [TypeT]),
    arrayBytes: native('wirefilter_add_bytes_value_to_array', t.bool, [u64, t.uint32, u64, u64]),
    arrayInt: native('wirefilter_add_int_value_to_array', t.bool, [u64, t.uint32, t.int32]),
    match: native('wirefilter_match', ResultT, [u64, u64]),
    freeMatch: native('wirefilter_free_matching_result', t.void, [ResultT]),
  };

  /** Calls a function whose arguments are all uint64 numbers. */
  const call64 = (fn: NativeFn, ...values: number[]): Buffer => {
    values.forEach((v, i) => w64(fn.args[i], v));
    fn.call();
    return fn.result;
  };
  const callBool = (fn: NativeFn, ...values: number[]): boolean => call64(fn, ...values)[0] !== 0;
  /** Frees a Rust-side result by passing the 24 result bytes back by value. */
  const freeResult = (freer: NativeFn, result: Buffer): void => {
    result.copy(freer.args[0], 0, 0, RESULT_SIZE);
    freer.call();
  };
  /** The Rust-allocated string `{ ptr, len }` at offset 8 of a result. */
  const resultText = (result: Buffer): string => {
    const n = r64(result, 16);
    if (n === 0 || r64(result, 8) === 0) return '';
    return ref.readPointer(result, 8, n).toString('utf8');
  };

  /** A `wirefilter_type_t` value (16 bytes), copied out so it can be reused as an argument. */
  const primitive = (tag: number): Buffer => {
    const b = Buffer.alloc(TYPE_SIZE);
    b[0] = tag;
    return b;
  };
  const withType = (fn: NativeFn, type: Buffer): NativeFn => {
    type.copy(fn.args[0], 0, 0, TYPE_SIZE);
    return fn;
  };
  const arrayOf = (elem: Buffer): Buffer => {
    withType(f.arrayType, elem).call();
    return Buffer.from(f.arrayType.result.subarray(0, TYPE_SIZE));
  };
  const mapOf = (elem: Buffer): Buffer => {
    withType(f.mapType, elem).call();
    return Buffer.from(f.mapType.result.subarray(0, TYPE_SIZE));
  };
  const typeOf = (type: FieldType): Buffer => {
    switch (type) {
      case 'Bytes':
      case 'Int':
      case 'Bool':
      case 'Ip':
        return primitive(TAG[type]);
      case 'Array<Bytes>':
        return arrayOf(primitive(TAG.Bytes));
      case 'Array<Int>':
        return arrayOf(primitive(TAG.Int));
      case 'Map<Array<Bytes>>':
        return mapOf(arrayOf(primitive(TAG.Bytes)));
    }
  };
  /** A new engine-side value (map or array) of the given type. */
  const create = (fn: NativeFn, type: Buffer): number => {
    withType(fn, type).call();
    return r64(fn.result);
  };

  const version = (() => {
    f.version.call();
    const n = r64(f.version.result, 8);
    return ref.readPointer(f.version.result, 0, n).toString('utf8');
  })();

  f.hook.call();
  f.enableCatcher.call();
  f.fallbackMode.args[0][0] = 0; // continue after a caught panic
  f.fallbackMode.call();
  if (f.fallbackMode.result[0] !== 1) throw new Error('cannot set the panic catcher fallback mode');

  // Field names: registered once, their bytes kept for the life of the wrapper.
  const names = new Arena(ref);
  const nameAddr = new Map<string, readonly [number, number]>();
  const nameOf = (name: string): readonly [number, number] => {
    let n = nameAddr.get(name);
    if (!n) {
      const bytes = Buffer.from(name, 'utf8');
      n = [names.put(bytes), bytes.length];
      nameAddr.set(name, n);
    }
    return n;
  };

  f.createScheme.call();
  const scheme = r64(f.createScheme.result);
  call64(f.addFunctions, scheme);
  const fields = new Map<string, FieldType>();
  for (const [name, type] of FIREWALKER_FIELDS) {
    const [a, l] = nameOf(name);
    w64(f.addField.args[0], scheme);
    w64(f.addField.args[1], a);
    w64(f.addField.args[2], l);
    typeOf(type).copy(f.addField.args[3], 0, 0, TYPE_SIZE);
    f.addField.call();
    if (f.addField.result[0] === 0) throw new Error(`cannot register field ${name}`);
    fields.set(name, type);
  }
  // Composite type values own engine memory that the call they are passed to takes over,
  // so each use needs a fresh one.
  const arrayOfBytes = (): Buffer => arrayOf(primitive(TAG.Bytes));
  const arrayOfInt = (): Buffer => arrayOf(primitive(TAG.Int));
  const arrayOfIp = (): Buffer => arrayOf(primitive(TAG.Ip));

  type Entry = { readonly ok: true; readonly filter: number } | { readonly ok: false; readonly message: string };
  const cache = new Map<string, Entry>();
  let closed = false;

  const parseAndCompile = (expr: string): Entry => {
    if (closed) throw new Error('wirefilter wrapper used after close()');
    const hit = cache.get(expr);
    if (hit) return hit;
    const arena = new Arena(ref);
    const bytes = Buffer.from(expr, 'utf8');
    const parsed = call64(f.parse, scheme, arena.put(bytes), bytes.length);
    arena.release();
    let entry: Entry;
    if (parsed[0] !== 1) {
      entry = { ok: false, message: resultText(parsed) };
      freeResult(f.freeParse, parsed);
    } else {
      // Compiling takes ownership of the AST.
      const compiled = call64(f.compile, r64(parsed, 8));
      if (compiled[0] !== 1) {
        entry = { ok: false, message: `compile error: ${resultText(compiled)}` };
        freeResult(f.freeCompile, compiled);
      } else {
        entry = { ok: true, filter: r64(compiled, 8) };
      }
    }
    cache.set(expr, entry);
    return entry;
  };

  const bytesOf = (v: unknown, field: string): Buffer => {
    if (typeof v === 'string') return Buffer.from(v, 'utf8');
    if (v instanceof Uint8Array) return Buffer.from(v);
    throw new WirefilterError(`${field}: expected a string for Bytes, got ${JSON.stringify(v)}`);
  };
  const int32Of = (v: unknown, field: string): number => {
    if (typeof v === 'number' && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff) return v;
    throw new WirefilterError(`${field}: expected an int32 for Int (this engine's Int is 32-bit), got ${String(v)}`);
  };

  const makeArray = (type: 'Array<Bytes>' | 'Array<Int>', value: unknown, field: string, arena: Arena): number => {
    if (!Array.isArray(value)) throw new WirefilterError(`${field}: expected an array, got ${JSON.stringify(value)}`);
    const arr = create(f.createArray, primitive(type === 'Array<Bytes>' ? TAG.Bytes : TAG.Int));
    value.forEach((item: unknown, i: number) => {
      let ok: boolean;
      if (type === 'Array<Bytes>') {
        const b = bytesOf(item, field);
        ok = callBool(f.arrayBytes, arr, i, arena.put(b), b.length);
      } else {
        w64(f.arrayInt.args[0], arr);
        f.arrayInt.args[1].writeUInt32LE(i, 0);
        f.arrayInt.args[2].writeInt32LE(int32Of(item, field), 0);
        f.arrayInt.call();
        ok = f.arrayInt.result[0] !== 0;
      }
      if (!ok) throw new WirefilterError(`${field}: cannot add element #${i}`);
    });
    return arr;
  };

  const context = (values: Readonly<Record<string, unknown>>, options: { readonly lists?: boolean } = {}): WirefilterContext & { ptr: number } => {
    const arena = new Arena(ref);
    const ctx = r64(call64(f.createCtx, scheme));
    let freed = false;
    const handle = {
      ptr: ctx,
      free(): void {
        if (freed) return;
        freed = true;
        call64(f.freeCtx, ctx);
        arena.release();
      },
    };
    try {
      if (options.lists !== false) {
        // As firewalker does: Bytes lists never match, Int and Ip lists come from (here
        // empty) list stores, so every `in $list` is false.
        if (!callBool(f.neverLists, ctx)) throw new WirefilterError('cannot set the lists');
        call64(f.intLists, ctx, create(f.createMap, arrayOfInt()));
        call64(f.ipLists, ctx, create(f.createMap, arrayOfIp()));
      }
      for (const [name, value] of Object.entries(values)) {
        const type = fields.get(name);
        if (type === undefined) throw new WirefilterError(`${name}: not a field of firewalker's scheme`);
        if (value === undefined) continue;
        const [na, nl] = nameOf(name);
        let ok: boolean;
        switch (type) {
          case 'Bytes': {
            const b = bytesOf(value, name);
            ok = callBool(f.ctxBytes, ctx, na, nl, arena.put(b), b.length);
            break;
          }
          case 'Int': {
            const fn = f.ctxInt;
            w64(fn.args[0], ctx);
            w64(fn.args[1], na);
            w64(fn.args[2], nl);
            fn.args[3].writeInt32LE(int32Of(value, name), 0);
            fn.call();
            ok = fn.result[0] !== 0;
            break;
          }
          case 'Bool': {
            if (typeof value !== 'boolean') throw new WirefilterError(`${name}: expected a boolean, got ${JSON.stringify(value)}`);
            const fn = f.ctxBool;
            w64(fn.args[0], ctx);
            w64(fn.args[1], na);
            w64(fn.args[2], nl);
            fn.args[3][0] = value ? 1 : 0;
            fn.call();
            ok = fn.result[0] !== 0;
            break;
          }
          case 'Ip': {
            const addr = typeof value === 'string' ? parseIpAddress(value) : undefined;
            if (!addr) throw new WirefilterError(`${name}: not an IP address: ${JSON.stringify(value)}`);
            ok = callBool(addr.length === 4 ? f.ctxIpv4 : f.ctxIpv6, ctx, na, nl, arena.put(addr));
            break;
          }
          case 'Array<Bytes>':
          case 'Array<Int>':
            ok = callBool(f.ctxArray, ctx, na, nl, makeArray(type, value, name, arena));
            break;
          case 'Map<Array<Bytes>>': {
            if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Uint8Array) {
              throw new WirefilterError(`${name}: expected an object of string arrays, got ${JSON.stringify(value)}`);
            }
            const map = create(f.createMap, arrayOfBytes());
            for (const [key, items] of Object.entries(value as Record<string, unknown>)) {
              const arr = makeArray('Array<Bytes>', items, `${name}[${JSON.stringify(key)}]`, arena);
              const k = Buffer.from(key, 'utf8');
              if (!callBool(f.mapArray, map, arena.put(k), k.length, arr)) throw new WirefilterError(`${name}: cannot add key ${JSON.stringify(key)}`);
            }
            ok = callBool(f.ctxMap, ctx, na, nl, map);
            break;
          }
        }
        if (!ok) throw new WirefilterError(`${name}: the engine refused the value ${JSON.stringify(value)}`);
      }
    } catch (e) {
      handle.free();
      throw e;
    }
    return handle;
  };

  const matchCtx = (filter: number, ctx: number): boolean => {
    const r = call64(f.match, filter, ctx);
    if (r[0] !== 1) {
      const message = resultText(r);
      freeResult(f.freeMatch, r);
      throw new WirefilterError(`engine error: ${message.split('\n')[0]}`);
    }
    return r[1] !== 0;
  };

  const compile = (expr: string): WirefilterFilter => {
    const entry = parseAndCompile(expr);
    if (!entry.ok) throw new WirefilterError(`does not parse: ${entry.message}`);
    const filter = entry.filter;
    return {
      matchContext(ctx: WirefilterContext): boolean {
        return matchCtx(filter, (ctx as WirefilterContext & { ptr: number }).ptr);
      },
    };
  };

  const identifiers = /[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*/g;
  /** Keywords are matched as prefixes (`orip.src`), so strip them from a name token. */
  const keywordPrefix = /^(?:and|or|xor|not)/;

  return {
    version,
    fields,
    parse(expr: string): ParseOutcome {
      if (closed) throw new Error('wirefilter wrapper used after close()');
      const arena = new Arena(ref);
      const bytes = Buffer.from(expr, 'utf8');
      const parsed = call64(f.parse, scheme, arena.put(bytes), bytes.length);
      arena.release();
      if (parsed[0] !== 1) {
        const message = resultText(parsed);
        freeResult(f.freeParse, parsed);
        return { ok: false, message };
      }
      call64(f.freeAst, r64(parsed, 8));
      return { ok: true };
    },
    check(expr: string): ParseOutcome {
      const entry = parseAndCompile(expr);
      return entry.ok ? { ok: true } : { ok: false, message: entry.message };
    },
    match(expr: string, values: Readonly<Record<string, unknown>>): boolean {
      const filter = compile(expr);
      const ctx = context(values, { lists: expr.includes('$') });
      try {
        return filter.matchContext(ctx);
      } finally {
        ctx.free();
      }
    },
    usedFields(expr: string): string[] {
      const out = new Set<string>();
      for (const m of expr.matchAll(identifiers)) {
        let tok = m[0];
        for (;;) {
          if (fields.has(tok)) out.add(tok);
          const k = keywordPrefix.exec(tok);
          if (!k) break;
          tok = tok.slice(k[0].length);
        }
      }
      return [...out];
    },
    compile,
    context,
    close(): void {
      if (closed) return;
      closed = true;
      for (const entry of cache.values()) if (entry.ok) call64(f.freeFilter, entry.filter);
      cache.clear();
    },
  };
}

/**
 * Parses an IPv4 dotted quad (4 decimal parts, no leading zeros, each <= 255) or an
 * IPv6 address (RFC 4291 text forms, `::`, embedded IPv4) into 4 or 16 bytes.
 */
export function parseIpAddress(s: string): Uint8Array | undefined {
  const v4 = parseIpv4(s);
  if (v4) return v4;
  return parseIpv6(s);
}

function parseIpv4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

function parseIpv6(s: string): Uint8Array | undefined {
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const groups = (part: string): number[] | undefined => {
    if (part === '') return [];
    const out: number[] = [];
    const items = part.split(':');
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = parseIpv4(item);
        if (!v4) return undefined;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9A-Fa-f]{1,4}$/.test(item)) return undefined;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return undefined;
  // An embedded IPv4 address may only end the address.
  if (halves.length === 2 && halves[0].includes('.')) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

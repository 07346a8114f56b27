/*
 * wirefilter harness for test/bench/evaluate.bench.ts: the native engine that the
 * `firewalker` package ships (lib/libwirefilter_ffi.so, wirefilter-ffi 0.7.0), called
 * directly from C, so that its match time is measured without any FFI layer.
 *
 *   harness < commands        (built by the bench: cc -O2 harness.c -ldl)
 *
 * The library path is the first argument; it is opened with dlopen so that no header
 * or link-time copy of the library is needed. The declarations below transcribe the C
 * header of wirefilter-ffi 0.7.0 (as firewalker's dist/wirefilter.js records it).
 *
 * Input (stdin, one record a line; <hex> is bytes in hex, `-` for none):
 *   field <name> <Bytes|Int|Bool|Ip|Array<Bytes>|Array<Int>|Map<Array<Bytes>>>
 *                                       the scheme, in registration order
 *   case <hex expression>               starts a case: an expression and its field values
 *   bytes <name> <hex> | int <name> <n> | bool <name> 0|1 | ip <name> <address>
 *   array <name> <hex>,<hex>,...        Array<Bytes>
 *   key <name> <hex key> <hex>,<hex>,...   one key of a Map<Array<Bytes>>
 *   go                                  parse, compile, build the contexts, report
 *   m <case> <n>                        time n matches of that case
 *   p <case> <n>                        time n parses + compiles of its expression
 *
 * Output (stdout):
 *   case <i> <match result 0|1> <parse ns> <compile ns>    one per case, after `go`
 *   ready
 *   t <ns for the n matches>                              one per `m`
 *   t <ns for the n parses + compiles>                    one per `p` (freeing not timed)
 * Errors go to stderr with exit status 2.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- wirefilter-ffi 0.7.0 (the parts used here) --------------------------------------- */

typedef struct {
  const char *data;
  size_t length;
} wf_str; /* externally allocated str / byte array, and Rust-allocated str */

typedef union {
  uint8_t success;
  struct {
    uint8_t _res;
    wf_str msg;
  } err;
  struct {
    uint8_t _res;
    void *ptr;
  } ok; /* the AST (parsing) or the filter (compiling) */
} wf_ptr_result;

typedef union {
  uint8_t success;
  struct {
    uint8_t _res;
    wf_str msg;
  } err;
  struct {
    uint8_t _res;
    bool value;
  } ok;
} wf_bool_result;

typedef struct {
  uint8_t tag; /* 0 Ip, 1 Bytes, 2 Int, 3 Bool; composite types carry data */
  void *data;
} wf_type;

enum { TAG_IP = 0, TAG_BYTES = 1, TAG_INT = 2, TAG_BOOL = 3 };

static void *(*create_scheme)(void);
static void (*add_functions)(void *scheme);
static wf_type (*array_type)(wf_type elem);
static wf_type (*map_type)(wf_type elem);
static bool (*add_field)(void *scheme, wf_str name, wf_type type);
static wf_ptr_result (*parse_filter)(void *scheme, wf_str input);
static wf_ptr_result (*compile_filter)(void *ast);
static void (*free_filter)(void *filter);
static void *(*create_ctx)(void *scheme);
static bool (*never_lists)(void *ctx);
static void (*int_lists)(void *ctx, void *map);
static void (*ip_lists)(void *ctx, void *map);
static bool (*ctx_bytes)(void *ctx, wf_str name, wf_str value);
static bool (*ctx_int)(void *ctx, wf_str name, int32_t value);
static bool (*ctx_bool)(void *ctx, wf_str name, bool value);
static bool (*ctx_ipv4)(void *ctx, wf_str name, const uint8_t *addr);
static bool (*ctx_ipv6)(void *ctx, wf_str name, const uint8_t *addr);
static bool (*ctx_map)(void *ctx, wf_str name, void *map);
static bool (*ctx_array)(void *ctx, wf_str name, void *array);
static void *(*create_map)(wf_type elem);
static bool (*map_array)(void *map, wf_str key, void *array);
static void *(*create_array)(wf_type elem);
static bool (*array_bytes)(void *array, uint32_t index, wf_str value);
static bool (*array_int)(void *array, uint32_t index, int32_t value);
static wf_bool_result (*match_filter)(void *filter, void *ctx);

/* --- helpers ---------------------------------------------------------------------------- */

__attribute__((noreturn)) static void die(const char *what, const char *detail) {
  fprintf(stderr, "harness: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(2);
}

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) die("missing symbol", name);
  return p;
}

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static wf_str cstr(const char *s) {
  wf_str r = {s, strlen(s)};
  return r;
}

/* Decodes hex (or `-` for empty) into a new buffer; the engine borrows it for good. */
static wf_str unhex(const char *h) {
  wf_str r = {NULL, 0};
  size_t n = strcmp(h, "-") == 0 ? 0 : strlen(h) / 2;
  char *out = malloc(n + 1);
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(h + 2 * i, "%2x", &v) != 1) die("bad hex", h);
    out[i] = (char)v;
  }
  out[n] = 0;
  r.data = out;
  r.length = n;
  return r;
}

static wf_type prim(uint8_t tag) {
  wf_type t = {tag, NULL};
  return t;
}

static wf_type type_of(const char *name) {
  if (strcmp(name, "Bytes") == 0) return prim(TAG_BYTES);
  if (strcmp(name, "Int") == 0) return prim(TAG_INT);
  if (strcmp(name, "Bool") == 0) return prim(TAG_BOOL);
  if (strcmp(name, "Ip") == 0) return prim(TAG_IP);
  if (strcmp(name, "Array<Bytes>") == 0) return array_type(prim(TAG_BYTES));
  if (strcmp(name, "Array<Int>") == 0) return array_type(prim(TAG_INT));
  if (strcmp(name, "Map<Array<Bytes>>") == 0) return map_type(array_type(prim(TAG_BYTES)));
  die("unknown field type", name);
}

/* An engine array of the comma-separated hex items in `list` (`-` for none). */
static void *bytes_array(char *list) {
  void *arr = create_array(prim(TAG_BYTES));
  if (strcmp(list, "-") == 0) return arr;
  uint32_t i = 0;
  for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
    if (!array_bytes(arr, i++, unhex(item))) die("cannot add an array element", NULL);
  }
  return arr;
}

/* --- the cases -------------------------------------------------------------------------- */

#define MAX_CASES 64
#define MAX_MAPS 16

typedef struct {
  wf_str expr;
  void *filter;
  void *ctx;
  /* Maps are filled key by key, then added to the context at `go`. */
  const char *map_names[MAX_MAPS];
  void *maps[MAX_MAPS];
  int nmaps;
} test_case;

static test_case cases[MAX_CASES];
static int ncases;
static void *scheme;

static test_case *current(void) {
  if (ncases == 0) die("a field value before any `case`", NULL);
  return &cases[ncases - 1];
}

static void *map_for(test_case *c, const char *name) {
  for (int i = 0; i < c->nmaps; i++)
    if (strcmp(c->map_names[i], name) == 0) return c->maps[i];
  if (c->nmaps == MAX_MAPS) die("too many maps in one case", name);
  c->map_names[c->nmaps] = strdup(name);
  c->maps[c->nmaps] = create_map(array_type(prim(TAG_BYTES)));
  return c->maps[c->nmaps++];
}

static void new_case(const char *hex) {
  if (ncases == MAX_CASES) die("too many cases", NULL);
  test_case *c = &cases[ncases++];
  memset(c, 0, sizeof *c);
  c->expr = unhex(hex);
  c->ctx = create_ctx(scheme);
  /* As firewalker does: Bytes lists never match, Int and Ip lists are empty stores. */
  if (!never_lists(c->ctx)) die("cannot set the lists", NULL);
  int_lists(c->ctx, create_map(array_type(prim(TAG_INT))));
  ip_lists(c->ctx, create_map(array_type(prim(TAG_IP))));
}

static void go(void) {
  for (int i = 0; i < ncases; i++) {
    test_case *c = &cases[i];
    for (int m = 0; m < c->nmaps; m++)
      if (!ctx_map(c->ctx, cstr(c->map_names[m]), c->maps[m])) die("cannot set map field", c->map_names[m]);
    uint64_t t0 = now_ns();
    wf_ptr_result p = parse_filter(scheme, c->expr);
    uint64_t t1 = now_ns();
    if (p.success != 1) {
      fprintf(stderr, "harness: case %d does not parse: %.*s\n", i, (int)p.err.msg.length, p.err.msg.data);
      exit(2);
    }
    wf_ptr_result f = compile_filter(p.ok.ptr);
    uint64_t t2 = now_ns();
    if (f.success != 1) die("does not compile", NULL);
    c->filter = f.ok.ptr;
    wf_bool_result r = match_filter(c->filter, c->ctx);
    if (r.success != 1) {
      fprintf(stderr, "harness: case %d: engine error: %.*s\n", i, (int)r.err.msg.length, r.err.msg.data);
      exit(2);
    }
    printf("case %d %d %llu %llu\n", i, r.ok.value ? 1 : 0, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
  }
  printf("ready\n");
  fflush(stdout);
}

static void timed(int i, long n) {
  if (i < 0 || i >= ncases || !cases[i].filter) die("no such case", NULL);
  void *filter = cases[i].filter, *ctx = cases[i].ctx;
  unsigned hits = 0;
  uint64_t t0 = now_ns();
  for (long k = 0; k < n; k++) {
    wf_bool_result r = match_filter(filter, ctx);
    hits += r.ok.value;
  }
  uint64_t t1 = now_ns();
  /* `hits` keeps the calls from being optimised away; it is always 0 or n. */
  printf("t %llu %u\n", (unsigned long long)(t1 - t0), hits);
  fflush(stdout);
}

static void parse_timed(int i, long n) {
  if (i < 0 || i >= ncases || !cases[i].filter) die("no such case", NULL);
  uint64_t total = 0;
  for (long k = 0; k < n; k++) {
    uint64_t t0 = now_ns();
    wf_ptr_result p = parse_filter(scheme, cases[i].expr);
    if (p.success != 1) die("does not parse", NULL);
    /* compile_filter takes the AST over. */
    wf_ptr_result f = compile_filter(p.ok.ptr);
    total += now_ns() - t0;
    if (f.success != 1) die("does not compile", NULL);
    free_filter(f.ok.ptr);
  }
  printf("t %llu\n", (unsigned long long)total);
  fflush(stdout);
}

int main(int argc, char **argv) {
  if (argc != 2) die("usage: harness /path/to/libwirefilter_ffi.so < commands", NULL);
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) die("cannot load the library", dlerror());
  *(void **)&create_scheme = sym(lib, "wirefilter_create_scheme");
  *(void **)&add_functions = sym(lib, "add_standard_functions");
  *(void **)&array_type = sym(lib, "wirefilter_create_array_type");
  *(void **)&map_type = sym(lib, "wirefilter_create_map_type");
  *(void **)&add_field = sym(lib, "wirefilter_add_type_field_to_scheme");
  *(void **)&parse_filter = sym(lib, "wirefilter_parse_filter");
  *(void **)&compile_filter = sym(lib, "wirefilter_compile_filter");
  *(void **)&free_filter = sym(lib, "wirefilter_free_compiled_filter");
  *(void **)&create_ctx = sym(lib, "wirefilter_create_execution_context");
  *(void **)&never_lists = sym(lib, "set_all_lists_to_nevermatch");
  *(void **)&int_lists = sym(lib, "wirefilter_setup_int_lists");
  *(void **)&ip_lists = sym(lib, "wirefilter_setup_ip_lists");
  *(void **)&ctx_bytes = sym(lib, "wirefilter_add_bytes_value_to_execution_context");
  *(void **)&ctx_int = sym(lib, "wirefilter_add_int_value_to_execution_context");
  *(void **)&ctx_bool = sym(lib, "wirefilter_add_bool_value_to_execution_context");
  *(void **)&ctx_ipv4 = sym(lib, "wirefilter_add_ipv4_value_to_execution_context");
  *(void **)&ctx_ipv6 = sym(lib, "wirefilter_add_ipv6_value_to_execution_context");
  *(void **)&ctx_map = sym(lib, "wirefilter_add_map_value_to_execution_context");
  *(void **)&ctx_array = sym(lib, "wirefilter_add_array_value_to_execution_context");
  *(void **)&create_map = sym(lib, "wirefilter_create_map");
  *(void **)&map_array = sym(lib, "wirefilter_add_array_value_to_map");
  *(void **)&create_array = sym(lib, "wirefilter_create_array");
  *(void **)&array_bytes = sym(lib, "wirefilter_add_bytes_value_to_array");
  *(void **)&array_int = sym(lib, "wirefilter_add_int_value_to_array");
  *(void **)&match_filter = sym(lib, "wirefilter_match");

  scheme = create_scheme();
  add_functions(scheme);

  char *line = NULL;
  size_t cap = 0;
  while (getline(&line, &cap, stdin) > 0) {
    line[strcspn(line, "\n")] = 0;
    char *cmd = strtok(line, " ");
    if (!cmd) continue;
    char *a = strtok(NULL, " "), *b = strtok(NULL, " "), *c = strtok(NULL, " ");
    if (strcmp(cmd, "field") == 0 && a && b) {
      char *name = strdup(a);
      if (!add_field(scheme, cstr(name), type_of(b))) die("cannot register field", a);
    } else if (strcmp(cmd, "case") == 0 && a) {
      new_case(a);
    } else if (strcmp(cmd, "bytes") == 0 && a && b) {
      if (!ctx_bytes(current()->ctx, cstr(strdup(a)), unhex(b))) die("cannot set field", a);
    } else if (strcmp(cmd, "int") == 0 && a && b) {
      if (!ctx_int(current()->ctx, cstr(strdup(a)), (int32_t)strtol(b, NULL, 10))) die("cannot set field", a);
    } else if (strcmp(cmd, "bool") == 0 && a && b) {
      if (!ctx_bool(current()->ctx, cstr(strdup(a)), strcmp(b, "1") == 0)) die("cannot set field", a);
    } else if (strcmp(cmd, "ip") == 0 && a && b) {
      uint8_t *addr = malloc(16);
      bool ok;
      if (inet_pton(AF_INET, b, addr) == 1) ok = ctx_ipv4(current()->ctx, cstr(strdup(a)), addr);
      else if (inet_pton(AF_INET6, b, addr) == 1) ok = ctx_ipv6(current()->ctx, cstr(strdup(a)), addr);
      else die("not an IP address", b);
      if (!ok) die("cannot set field", a);
    } else if (strcmp(cmd, "array") == 0 && a && b) {
      if (!ctx_array(current()->ctx, cstr(strdup(a)), bytes_array(b))) die("cannot set field", a);
    } else if (strcmp(cmd, "key") == 0 && a && b && c) {
      if (!map_array(map_for(current(), a), unhex(b), bytes_array(c))) die("cannot add map key", b);
    } else if (strcmp(cmd, "go") == 0) {
      go();
    } else if (strcmp(cmd, "m") == 0 && a && b) {
      timed(atoi(a), atol(b));
    } else if (strcmp(cmd, "p") == 0 && a && b) {
      parse_timed(atoi(a), atol(b));
    } else {
      die("bad command", cmd);
    }
  }
  return 0;
}

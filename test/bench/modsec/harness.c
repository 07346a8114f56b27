/*
 * libmodsecurity3 harness for test/bench/crs.bench.ts: loads a ModSecurity config (the
 * bench writes one per paranoia level: engine settings, crs-setup.conf, the CRS 3.3.4
 * REQUEST-9xx rules), reads a corpus of requests, and runs each request through a
 * transaction the way a server connector does (connection, URI, headers, body, with an
 * intervention check after each step; a disruptive intervention ends the request).
 *
 *   harness CONFIG CORPUS
 *
 * RULESMITH_BENCH_EVICT_MB=N (as crs.bench.ts): before each timed request, N MB of memory
 * are written, so that each request finds the caches as a lightly loaded server does.
 *
 * First the verdict round (not timed): a ModSecurity instance with a log callback collects
 * the ids of the rules that logged (`[id "N"]` in each message). Then the harness waits for
 * commands on stdin, so that the bench can interleave its own rounds with ModSecurity's on
 * a shared machine: each line `r` (or `r <µs>`: the thread sleeps that long before each
 * request, as a server between requests at a fixed rate; idleEval.bench.ts) runs one timed round over the corpus on a second instance
 * without a log callback (nothing is written anywhere: the config turns the audit log and
 * debug log off), over the same rules; end of input ends the harness.
 *
 * Output (stdout, one record a line):
 *   load_ms <ms to parse the config and rules>
 *   v <index> <blocked 0|1> <status> <id,id,...|->    one per request, from the verdict round
 *   ready
 *   round <ns of request 0> <ns of request 1> ...      one per `r`
 *
 * Corpus format (written by the bench): little-endian; u32 request count, then per
 * request: str method, str uri, str http_version ("1.1"), str client_ip, u32 server_port,
 * u32 header count, (str name, str value) per header, str body; where str = u32 length
 * followed by that many bytes (no terminator).
 */
#include <modsecurity/intervention.h>
#include <modsecurity/modsecurity.h>
#include <modsecurity/rules_set.h>
#include <modsecurity/transaction.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  char *p;
  uint32_t n;
} str;

typedef struct {
  str method, uri, version, ip, body;
  uint32_t port, nheaders;
  str *names, *values;
} request;

static unsigned char *buf;
static size_t buflen, pos;

static uint32_t u32(void) {
  if (pos + 4 > buflen) {
    fprintf(stderr, "harness: corpus truncated\n");
    exit(2);
  }
  uint32_t v = (uint32_t)buf[pos] | (uint32_t)buf[pos + 1] << 8 | (uint32_t)buf[pos + 2] << 16 | (uint32_t)buf[pos + 3] << 24;
  pos += 4;
  return v;
}

/* A string from the corpus, copied and NUL-terminated (the C API takes char * for some). */
static str getstr(void) {
  str s;
  s.n = u32();
  if (pos + s.n > buflen) {
    fprintf(stderr, "harness: corpus truncated\n");
    exit(2);
  }
  s.p = malloc(s.n + 1);
  memcpy(s.p, buf + pos, s.n);
  s.p[s.n] = 0;
  pos += s.n;
  return s;
}

/* Rule ids of the current request's log messages, appended as ",N". */
static char ids[65536];
static size_t idslen;

static void log_cb(void *data, const void *msg) {
  (void)data;
  const char *s = (const char *)msg;
  while (s && (s = strstr(s, "[id \"")) != NULL) {
    s += 5;
    const char *e = strchr(s, '"');
    if (!e) break;
    size_t n = (size_t)(e - s);
    if (idslen + n + 2 < sizeof ids) {
      ids[idslen++] = ',';
      memcpy(ids + idslen, s, n);
      idslen += n;
      ids[idslen] = 0;
    }
    s = e;
  }
}

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* 1 when ModSecurity asks to disrupt; *status gets its status code. */
static int intervened(Transaction *t, int *status) {
  ModSecurityIntervention it;
  memset(&it, 0, sizeof it);
  it.status = 200;
  int r = msc_intervention(t, &it);
  if (it.log) free(it.log);
  if (it.url) free(it.url);
  if (r && it.disruptive) {
    *status = it.status;
    return 1;
  }
  return 0;
}

/* One request through one transaction; returns 1 when it was disrupted. */
static int run(ModSecurity *ms, RulesSet *rules, const request *q, int *status) {
  Transaction *t = msc_new_transaction(ms, rules, NULL);
  int blocked = 0;
  *status = 0;
  msc_process_connection(t, q->ip.p, 40000, "127.0.0.1", (int)q->port);
  if ((blocked = intervened(t, status))) goto done;
  msc_process_uri(t, q->uri.p, q->method.p, q->version.p);
  if ((blocked = intervened(t, status))) goto done;
  for (uint32_t h = 0; h < q->nheaders; h++)
    msc_add_n_request_header(t, (const unsigned char *)q->names[h].p, q->names[h].n, (const unsigned char *)q->values[h].p, q->values[h].n);
  msc_process_request_headers(t);
  if ((blocked = intervened(t, status))) goto done;
  if (q->body.n) msc_append_request_body(t, (const unsigned char *)q->body.p, q->body.n);
  msc_process_request_body(t);
  blocked = intervened(t, status);
done:
  msc_transaction_cleanup(t);
  return blocked;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: harness CONFIG CORPUS\n");
    return 2;
  }

  FILE *f = fopen(argv[2], "rb");
  if (!f) {
    perror(argv[2]);
    return 2;
  }
  fseek(f, 0, SEEK_END);
  buflen = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  buf = malloc(buflen ? buflen : 1);
  if (fread(buf, 1, buflen, f) != buflen) {
    perror(argv[2]);
    return 2;
  }
  fclose(f);
  uint32_t n = u32();
  request *reqs = calloc(n ? n : 1, sizeof *reqs);
  for (uint32_t i = 0; i < n; i++) {
    request *q = &reqs[i];
    q->method = getstr();
    q->uri = getstr();
    q->version = getstr();
    q->ip = getstr();
    q->port = u32();
    q->nheaders = u32();
    q->names = calloc(q->nheaders ? q->nheaders : 1, sizeof(str));
    q->values = calloc(q->nheaders ? q->nheaders : 1, sizeof(str));
    for (uint32_t h = 0; h < q->nheaders; h++) {
      q->names[h] = getstr();
      q->values[h] = getstr();
    }
    q->body = getstr();
  }

  double t0 = now_ns();
  RulesSet *rules = msc_create_rules_set();
  const char *error = NULL;
  if (msc_rules_add_file(rules, argv[1], &error) < 0) {
    fprintf(stderr, "harness: %s: %s\n", argv[1], error ? error : "cannot load");
    return 1;
  }
  printf("load_ms %.1f\n", (now_ns() - t0) / 1e6);

  ModSecurity *logged = msc_init();
  msc_set_connector_info(logged, "rulesmith-bench-harness");
  msc_set_log_cb(logged, log_cb);
  ModSecurity *quiet = msc_init();
  msc_set_connector_info(quiet, "rulesmith-bench-harness");

  /* Round 0: verdicts and matched rule ids. */
  for (uint32_t i = 0; i < n; i++) {
    int status;
    idslen = 0;
    ids[0] = 0;
    int b = run(logged, rules, &reqs[i], &status);
    printf("v %u %d %d %s\n", i, b, status, idslen ? ids + 1 : "-");
  }

  printf("ready\n");
  fflush(stdout);

  /* Evicting the caches between timed requests (see the top). */
  const char *evict_env = getenv("RULESMITH_BENCH_EVICT_MB");
  size_t evict_n = evict_env ? (size_t)atol(evict_env) << 20 : 0;
  volatile unsigned char *evict_buf = evict_n ? calloc(evict_n, 1) : NULL;
  if (!evict_buf) evict_n = 0;

  /* Timed rounds, one per `r` line. */
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    if (line[0] != 'r') continue;
    long gap_us = atol(line + 1);
    struct timespec gap = {gap_us / 1000000, (gap_us % 1000000) * 1000};
    fputs("round", stdout);
    for (uint32_t i = 0; i < n; i++) {
      int status;
      for (size_t k = 0; k < evict_n; k += 64) evict_buf[k]++;
      if (gap_us > 0) nanosleep(&gap, NULL);
      double s = now_ns();
      run(quiet, rules, &reqs[i], &status);
      printf(" %.0f", now_ns() - s);
    }
    putchar('\n');
    fflush(stdout);
  }
  fflush(stdout);
  msc_rules_cleanup(rules);
  msc_cleanup(logged);
  msc_cleanup(quiet);
  return 0;
}

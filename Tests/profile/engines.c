/* A durable commit in the storage engines Debian packages most used, one writer, nothing else running
 * (docs/BENCHMARKS.md, "Stop 55"): is there a well-kept engine that commits a toggle for less
 * than SQLite does, closer to the bench's floor (an append to a preallocated file and one
 * fdatasync)? Each commit carries PER changes: an event row keyed by seq, and the request's id
 * with its request and reply, the rows a durable toggle writes. Prints the p50 and p90 of a
 * commit, changes/s, and this process's CPU (every thread, the kernel's work for it included)
 * per commit and per change, after 500 commits of warm-up.
 *   apt-get install -y libsqlite3-dev librocksdb-dev libleveldb-dev liblmdb-dev
 *   cc -O2 -o engines Tests/profile/engines.c -lsqlite3 -lrocksdb -lleveldb -llmdb
 *   ./engines raw|sqlite|rocksdb|rocksdb-recycle|leveldb|lmdb|lmdb-nometasync DIR PER COMMITS
 * (DIR a fresh directory each run, on the disk the service would use.) sqlite is the service's
 * WAL with synchronous=FULL; rocksdb-recycle reuses WAL files (overwrites, as the floor does);
 * lmdb-nometasync skips LMDB's second sync per commit (the meta page's). */
// usage: engines ENGINE DIR CHANGES_PER_COMMIT COMMITS
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include <rocksdb/c.h>
#include <leveldb/c.h>
#include <lmdb.h>

static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec / 1e3; }
static double cpu_us(void) { struct rusage r; getrusage(RUSAGE_SELF, &r); return r.ru_utime.tv_sec * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_sec * 1e6 + r.ru_stime.tv_usec; }
static int cmp(const void *a, const void *b) { double x = *(double *)a, y = *(double *)b; return x < y ? -1 : x > y; }

static char event[256], reqid[64], request[128], reply[256];
static long seq = 0;
static void make(long s) {
  snprintf(event, sizeof event, "{\"seq\":%ld,\"index\":%ld,\"name\":\"Country number %ld\",\"visited\":true,\"store\":\"6f1c2a9e-0b3d-4c55-9a8e-2d7f4b1c9e03\"}", s, s % 250, s % 250);
  snprintf(reqid, sizeof reqid, "client-7f3a9c21-%08ld", s);
  snprintf(request, sizeof request, "{\"op\":\"toggle\",\"index\":%ld,\"id\":\"%s\"}", s % 250, reqid);
  snprintf(reply, sizeof reply, "{\"ok\":true,\"seq\":%ld,\"changed\":true,\"country\":{\"name\":\"Country number %ld\",\"visited\":true}}", s, s % 250);
}
static void bekey(char *k, long v) { for (int i = 7; i >= 0; i--) { k[i] = v & 0xff; v >>= 8; } }

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: engines raw|sqlite|rocksdb|rocksdb-recycle|leveldb|lmdb|lmdb-nometasync DIR PER COMMITS\n"); return 2; }
  const char *engine = argv[1], *dir = argv[2]; int per = atoi(argv[3]), commits = atoi(argv[4]);
  int warm = 500;
  double *lat = malloc(sizeof(double) * commits);
  char path[512]; char *err = NULL;
  // raw
  int fd = -1; long off = 0; const long rawsize = 4 << 20;
  sqlite3 *db = NULL; sqlite3_stmt *ins_ev = NULL, *ins_rq = NULL, *upd = NULL;
  rocksdb_t *rdb = NULL; rocksdb_writeoptions_t *rwo = NULL;
  leveldb_t *ldb = NULL; leveldb_writeoptions_t *lwo = NULL;
  MDB_env *env = NULL; MDB_dbi dbi_ev, dbi_rq;
  if (!strcmp(engine, "raw")) {
    snprintf(path, sizeof path, "%s/raw", dir);
    fd = open(path, O_RDWR | O_CREAT, 0600);
    char *z = calloc(1, rawsize); pwrite(fd, z, rawsize, 0); fsync(fd); free(z);
  } else if (!strcmp(engine, "sqlite")) {
    snprintf(path, sizeof path, "%s/db.sqlite", dir);
    sqlite3_open(path, &db);
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
      "CREATE TABLE countries(position INTEGER PRIMARY KEY, name TEXT NOT NULL, visited INTEGER NOT NULL);"
      "CREATE TABLE events(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, body BLOB NOT NULL);"
      "CREATE TABLE requests(ordinal INTEGER PRIMARY KEY, id TEXT NOT NULL, request BLOB, reply BLOB NOT NULL, at INTEGER, event INTEGER);"
      "CREATE TABLE meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID; INSERT INTO meta VALUES('seq',0);", 0, 0, &err);
    if (err) { fprintf(stderr, "%s\n", err); return 1; }
    sqlite3_prepare_v2(db, "INSERT INTO events(seq, topic, body) VALUES (?1, 'countries.toggled', ?2)", -1, &ins_ev, 0);
    sqlite3_prepare_v2(db, "INSERT INTO requests(ordinal, id, request, reply, at, event) VALUES (?1, ?2, ?3, ?4, 0, ?1)", -1, &ins_rq, 0);
    sqlite3_prepare_v2(db, "UPDATE meta SET value = ?1 WHERE key = 'seq'", -1, &upd, 0);
  } else if (!strncmp(engine, "rocksdb", 7)) {
    rocksdb_options_t *o = rocksdb_options_create();
    rocksdb_options_set_create_if_missing(o, 1);
    if (!strcmp(engine, "rocksdb-recycle")) rocksdb_options_set_recycle_log_file_num(o, 4);
    snprintf(path, sizeof path, "%s/rocks", dir);
    rdb = rocksdb_open(o, path, &err); if (err) { fprintf(stderr, "%s\n", err); return 1; }
    rwo = rocksdb_writeoptions_create(); rocksdb_writeoptions_set_sync(rwo, 1);
  } else if (!strcmp(engine, "leveldb")) {
    leveldb_options_t *o = leveldb_options_create(); leveldb_options_set_create_if_missing(o, 1);
    snprintf(path, sizeof path, "%s/level", dir);
    ldb = leveldb_open(o, path, &err); if (err) { fprintf(stderr, "%s\n", err); return 1; }
    lwo = leveldb_writeoptions_create(); leveldb_writeoptions_set_sync(lwo, 1);
  } else if (!strncmp(engine, "lmdb", 4)) {
    mdb_env_create(&env); mdb_env_set_mapsize(env, 1L << 30); mdb_env_set_maxdbs(env, 4);
    snprintf(path, sizeof path, "%s/lmdb", dir); mkdir(path, 0700);
    int flags = !strcmp(engine, "lmdb-nometasync") ? MDB_NOMETASYNC : 0;
    if (mdb_env_open(env, path, flags, 0600)) { fprintf(stderr, "lmdb open\n"); return 1; }
    MDB_txn *t; mdb_txn_begin(env, 0, 0, &t); mdb_dbi_open(t, "events", MDB_CREATE, &dbi_ev); mdb_dbi_open(t, "requests", MDB_CREATE, &dbi_rq); mdb_txn_commit(t);
  } else { fprintf(stderr, "unknown engine\n"); return 2; }

  double c0 = 0, w0 = 0;
  char buf[8192];
  for (int i = 0; i < warm + commits; i++) {
    if (i == warm) { c0 = cpu_us(); w0 = now_us(); }
    double t0 = now_us();
    if (fd >= 0) {
      int n = 0;
      for (int j = 0; j < per; j++) { make(++seq); n += sprintf(buf + n, "%s\n%s\n%s\n%s\n", event, reqid, request, reply); }
      if (off + n > rawsize) off = 0;
      pwrite(fd, buf, n, off); off += n; fdatasync(fd);
    } else if (db) {
      sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0);
      for (int j = 0; j < per; j++) {
        make(++seq);
        sqlite3_bind_int64(ins_ev, 1, seq); sqlite3_bind_blob(ins_ev, 2, event, strlen(event), SQLITE_STATIC); sqlite3_step(ins_ev); sqlite3_reset(ins_ev);
        sqlite3_bind_int64(ins_rq, 1, seq); sqlite3_bind_text(ins_rq, 2, reqid, -1, SQLITE_STATIC); sqlite3_bind_blob(ins_rq, 3, request, strlen(request), SQLITE_STATIC); sqlite3_bind_blob(ins_rq, 4, reply, strlen(reply), SQLITE_STATIC); sqlite3_step(ins_rq); sqlite3_reset(ins_rq);
      }
      sqlite3_bind_int64(upd, 1, seq); sqlite3_step(upd); sqlite3_reset(upd);
      if (sqlite3_exec(db, "COMMIT", 0, 0, &err)) { fprintf(stderr, "%s\n", err); return 1; }
    } else if (rdb) {
      rocksdb_writebatch_t *b = rocksdb_writebatch_create();
      for (int j = 0; j < per; j++) {
        make(++seq); char k[9] = "e"; bekey(k + 1, seq);
        rocksdb_writebatch_put(b, k, 9, event, strlen(event));
        int n = sprintf(buf, "%s\n%s", request, reply);
        rocksdb_writebatch_put(b, reqid, strlen(reqid), buf, n);
      }
      rocksdb_write(rdb, rwo, b, &err); if (err) { fprintf(stderr, "%s\n", err); return 1; }
      rocksdb_writebatch_destroy(b);
    } else if (ldb) {
      leveldb_writebatch_t *b = leveldb_writebatch_create();
      for (int j = 0; j < per; j++) {
        make(++seq); char k[9] = "e"; bekey(k + 1, seq);
        leveldb_writebatch_put(b, k, 9, event, strlen(event));
        int n = sprintf(buf, "%s\n%s", request, reply);
        leveldb_writebatch_put(b, reqid, strlen(reqid), buf, n);
      }
      leveldb_write(ldb, lwo, b, &err); if (err) { fprintf(stderr, "%s\n", err); return 1; }
      leveldb_writebatch_destroy(b);
    } else {
      MDB_txn *t; mdb_txn_begin(env, 0, 0, &t);
      for (int j = 0; j < per; j++) {
        make(++seq); char k[8]; bekey(k, seq);
        MDB_val key = {8, k}, val = {strlen(event), event}; mdb_put(t, dbi_ev, &key, &val, MDB_APPEND);
        int n = sprintf(buf, "%s\n%s", request, reply);
        MDB_val k2 = {strlen(reqid), reqid}, v2 = {n, buf}; mdb_put(t, dbi_rq, &k2, &v2, 0);
      }
      if (mdb_txn_commit(t)) { fprintf(stderr, "lmdb commit\n"); return 1; }
    }
    if (i >= warm) lat[i - warm] = now_us() - t0;
  }
  double wall = now_us() - w0, cpu = cpu_us() - c0;
  qsort(lat, commits, sizeof(double), cmp);
  printf("%-16s per=%d commits=%d p50=%.0fus p90=%.0fus commits/s=%.0f changes/s=%.0f cpu/commit=%.1fus cpu/change=%.1fus\n",
    engine, per, commits, lat[commits / 2], lat[commits * 9 / 10], commits / wall * 1e6, commits * per / wall * 1e6, cpu / commits, cpu / commits / per);
  if (rdb) rocksdb_close(rdb);
  if (ldb) leveldb_close(ldb);
  if (db) sqlite3_close(db);
  if (env) mdb_env_close(env);
  return 0;
}

/* SQLite's share of a durable commit, alone (docs/BENCHMARKS.md, "Stop 19"): COMMITS
 * transactions of BATCH toggles each, WAL with synchronous=FULL as the service runs it, rows the
 * size of a toggle's; prints commits/s and this process's CPU per toggle (the sync's kernel work
 * included). MODE 2 appends an event row and a request row per toggle (schema 3); MODE 1 one log
 * row carrying both (the "one log row per toggle" idea).
 *   cc -O2 -o sqlite-commit Tests/profile/sqlite-commit.c -lsqlite3
 *   ./sqlite-commit /tmp/x.db 2 7 3000     (a fresh file each run) */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec/1e9;}
static double cpu(){struct rusage u;getrusage(RUSAGE_SELF,&u);return u.ru_utime.tv_sec+u.ru_utime.tv_usec/1e6+u.ru_stime.tv_sec+u.ru_stime.tv_usec/1e6;}
int main(int argc,char**argv){
  if(argc!=5){fprintf(stderr,"usage: sqlite-commit FILE MODE(1|2) BATCH COMMITS\n");return 64;}
  int mode=atoi(argv[2]), batch=atoi(argv[3]), commits=atoi(argv[4]);
  sqlite3*db; sqlite3_open(argv[1],&db);
  sqlite3_exec(db,"PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
   "CREATE TABLE events(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, body BLOB NOT NULL);"
   "CREATE TABLE requests(ordinal INTEGER PRIMARY KEY, id TEXT NOT NULL, reply BLOB NOT NULL, request BLOB);"
   "CREATE TABLE log(seq INTEGER PRIMARY KEY, topic TEXT NOT NULL, body BLOB NOT NULL, id TEXT, reply BLOB, request BLOB);",0,0,0);
  sqlite3_stmt *ev,*rq,*lg,*b,*c;
  sqlite3_prepare_v2(db,"INSERT INTO events(seq,topic,body) VALUES(?1,?2,?3)",-1,&ev,0);
  sqlite3_prepare_v2(db,"INSERT INTO requests(ordinal,id,request,reply) VALUES(?1,?2,?3,?4)",-1,&rq,0);
  sqlite3_prepare_v2(db,"INSERT INTO log(seq,topic,body,id,request,reply) VALUES(?1,?2,?3,?4,?5,?6)",-1,&lg,0);
  sqlite3_prepare_v2(db,"BEGIN IMMEDIATE",-1,&b,0); sqlite3_prepare_v2(db,"COMMIT",-1,&c,0);
  const char*body="{\"country\":{\"index\":3,\"name\":\"Germany\",\"visited\":true},\"seq\":123456,\"store\":\"8f0c1d2e-aaaa-bbbb-cccc-0123456789ab\",\"topic\":\"country.changed\"}";
  const char*reply="{\"country\":{\"index\":3,\"name\":\"Germany\",\"visited\":true},\"ok\":true,\"seq\":123456,\"store\":\"8f0c1d2e-aaaa-bbbb-cccc-0123456789ab\"}";
  const char*req="{\"index\":3,\"op\":\"toggle\"}";
  char id[64]; long seq=0; double t0=now(), c0=cpu();
  for(int k=0;k<commits;k++){
    sqlite3_step(b); sqlite3_reset(b);
    for(int i=0;i<batch;i++){ seq++; snprintf(id,sizeof id,"%08lx-1111-2222-3333-444455556666",seq*2654435761UL);
      if(mode==2){
        sqlite3_bind_int64(ev,1,seq); sqlite3_bind_text(ev,2,"country.changed",-1,SQLITE_STATIC); sqlite3_bind_blob(ev,3,body,strlen(body),SQLITE_STATIC); sqlite3_step(ev); sqlite3_reset(ev);
        sqlite3_bind_int64(rq,1,seq); sqlite3_bind_text(rq,2,id,-1,SQLITE_TRANSIENT); sqlite3_bind_blob(rq,3,req,strlen(req),SQLITE_STATIC); sqlite3_bind_blob(rq,4,reply,strlen(reply),SQLITE_STATIC); sqlite3_step(rq); sqlite3_reset(rq);
      } else {
        sqlite3_bind_int64(lg,1,seq); sqlite3_bind_text(lg,2,"country.changed",-1,SQLITE_STATIC); sqlite3_bind_blob(lg,3,body,strlen(body),SQLITE_STATIC);
        sqlite3_bind_text(lg,4,id,-1,SQLITE_TRANSIENT); sqlite3_bind_blob(lg,5,req,strlen(req),SQLITE_STATIC); sqlite3_bind_blob(lg,6,reply,strlen(reply),SQLITE_STATIC); sqlite3_step(lg); sqlite3_reset(lg);
      }
    }
    if(sqlite3_step(c)!=SQLITE_DONE){fprintf(stderr,"commit failed\n");return 1;} sqlite3_reset(c);
  }
  double t=now()-t0, u=cpu()-c0;
  printf("mode %d batch %d: %.0f commits/s, %.0f toggles/s, CPU %.1f us per toggle\n",mode,batch,commits/t,commits*batch/t,u*1e6/(commits*batch));
  return 0;}

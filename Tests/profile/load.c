/* A bare libzmq load generator for scripts/profile-load (docs/BENCHMARKS.md): CLIENTS threads,
 * each with its own REQ socket, toggling row (thread % 8) with a fresh request id for SECONDS
 * (or, given REQUESTS, until each client has made that many); prints the toggles per second of
 * all threads and client 0's p50 round trip. In C, so its own
 * cost per round trip is as small as the floor's clients' and comparisons of two builds of the
 * service are not blurred by the client. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

enum { maximumClients = 64 };
static const char *endpoint;
static double seconds;
static long requests;
static void *context;
static long completed[maximumClients];
static double *latencies[maximumClients];

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void *client(void *argument) {
    long id = (long)argument;
    void *socket = zmq_socket(context, ZMQ_REQ);
    int linger = 0, timeout = requests > 0 ? 120000 : 5000;  /* a count may run under valgrind */
    zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(socket, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    zmq_connect(socket, endpoint);
    char request[128], reply[1024];
    size_t capacity = requests > 0 ? (size_t)requests : (size_t)(seconds * 200000) + 1000;
    latencies[id] = malloc(sizeof(double) * capacity);
    double end = now() + seconds;
    long n = 0;
    while ((requests > 0 || now() < end) && (size_t)n < capacity) {
        int length = snprintf(request, sizeof request, "{\"op\":\"toggle\",\"index\":%ld,\"id\":\"load-%ld-%ld-%08lx\"}",
                              id % 8, id, n, (unsigned long)random());
        double started = now();
        if (zmq_send(socket, request, length, 0) < 0 || zmq_recv(socket, reply, sizeof reply, 0) < 0) break;
        latencies[id][n++] = now() - started;
    }
    completed[id] = n;
    zmq_close(socket);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5 || atoi(argv[2]) < 1 || atoi(argv[2]) > maximumClients || atof(argv[3]) <= 0
        || (argc == 5 && atol(argv[4]) < 1)) {
        fprintf(stderr, "usage: load ENDPOINT CLIENTS(1-%d) SECONDS [REQUESTS]\n", maximumClients);
        return 64;
    }
    /* Ids differ from run to run: a second run against the same store must not replay the first
     * run's ids, which the service answers from memory without changing anything. */
    srandom((unsigned)time(NULL) ^ (unsigned)getpid());
    endpoint = argv[1];
    int clients = atoi(argv[2]);
    seconds = atof(argv[3]);
    requests = argc == 5 ? atol(argv[4]) : 0;
    context = zmq_ctx_new();
    pthread_t threads[maximumClients];
    double started = now();
    for (long i = 0; i < clients; i++) pthread_create(&threads[i], NULL, client, (void *)i);
    long total = 0;
    for (int i = 0; i < clients; i++) {
        pthread_join(threads[i], NULL);
        total += completed[i];
    }
    double elapsed = now() - started;
    double p50 = 0;
    if (completed[0] > 0) {
        qsort(latencies[0], completed[0], sizeof(double), ascending);
        p50 = latencies[0][completed[0] / 2] * 1e6;
    }
    printf("%d clients: %.0f toggles/s, client 0 p50 %.0f us\n", clients, total / (requests > 0 ? elapsed : seconds), p50);
    zmq_ctx_term(context);
    return total > 0 && (requests == 0 || total == requests * clients) ? 0 : 1;
}

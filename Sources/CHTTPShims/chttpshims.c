#define _GNU_SOURCE   /* strptime, timegm */
#include <stdarg.h>
#include "chttpshims.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/socket.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <microhttpd.h>

/* One connection as the limits see it. A slot is taken by the accept policy (reserved: accepted,
 * libmicrohttpd not yet told us its socket), then by MHD_CONNECTION_NOTIFY_STARTED (waiting for a
 * request: since its start or its previous answer), busy while its request is answered, closing
 * once we shut it down, and free at MHD_CONNECTION_NOTIFY_CLOSED (before libmicrohttpd closes the
 * socket: a slot's socket is open while the slot is not free). */
enum slot_state { slot_free, slot_reserved, slot_waiting, slot_busy, slot_closing };
struct slot {
    enum slot_state state;
    int fd;
    int64_t since;              /* ms on the clock: reserved, started, or its previous answer done */
    int family;
    unsigned char address[16];
};

struct context { pb_http_handler handler; void *context; };
struct pb_http_server {
    struct MHD_Daemon *daemon;
    struct context c;
    pb_http_clock clock;
    pb_http_refused refused;
    unsigned max_connections, per_client;
    int64_t deadline_ms;
    pthread_mutex_t lock;       /* the slots, the counters, stopping */
    pthread_cond_t wake;
    struct slot *slots;
    unsigned capacity;
    pb_http_counters counts;
    int stopping;
    int reaper_started;
    pthread_t reaper;
};

/* A reserved slot not claimed by its connection's start this long after (libmicrohttpd could not
 * set the connection up) is freed. */
enum { reservation_ms = 5000, reaper_period_ms = 250 };

static int64_t monotonic_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int64_t now_ms(pb_http_server *s) { return s->clock ? s->clock(s->c.context) : monotonic_ms(); }

/* The address's family and bytes; 0 for a family that is not IP. */
static int address_key(const struct sockaddr *sa, int *family, unsigned char out[16]) {
    memset(out, 0, 16);
    if (!sa) return 0;
    if (sa->sa_family == AF_INET) { memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4); *family = AF_INET; return 1; }
    if (sa->sa_family == AF_INET6) { memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16); *family = AF_INET6; return 1; }
    return 0;
}

static int same_address(const struct slot *slot, int family, const unsigned char address[16]) {
    return slot->family == family && memcmp(slot->address, address, 16) == 0;
}

/* MHD_AcceptPolicyCallback: the per-client limit, then max_connections (closing the connection
 * that has waited longest for a request, if any, to let this one in). */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
    (void)addrlen;
    pb_http_server *s = cls;
    int family = 0;
    unsigned char address[16];
    if (!address_key(addr, &family, address)) return MHD_YES;
    int64_t now = now_ms(s);
    int which = 0;
    unsigned open = 0, from_there = 0;
    pthread_mutex_lock(&s->lock);
    struct slot *free_slot = NULL, *oldest = NULL;
    for (unsigned i = 0; i < s->capacity; i++) {
        struct slot *slot = &s->slots[i];
        if (slot->state == slot_free) { if (!free_slot) free_slot = slot; continue; }
        if (slot->state == slot_closing) continue;
        open++;
        if (same_address(slot, family, address)) from_there++;
        if (slot->state == slot_waiting && (!oldest || slot->since < oldest->since)) oldest = slot;
    }
    if (from_there >= s->per_client) {
        which = pb_http_refused_per_client;
        s->counts.refused_per_client++;
    } else if (!free_slot || (open >= s->max_connections && !oldest)) {
        which = pb_http_refused_full;
        s->counts.refused_full++;
    } else {
        if (open >= s->max_connections) {
            shutdown(oldest->fd, SHUT_RDWR);
            oldest->state = slot_closing;
            s->counts.closed_for_newcomer++;
        }
        free_slot->state = slot_reserved;
        free_slot->fd = -1;
        free_slot->since = now;
        free_slot->family = family;
        memcpy(free_slot->address, address, 16);
    }
    pthread_mutex_unlock(&s->lock);
    if (!which) return MHD_YES;
    if (s->refused) {
        char text[INET6_ADDRSTRLEN] = "";
        inet_ntop(family, address, text, sizeof text);
        s->refused(s->c.context, text, which,
                   which == pb_http_refused_per_client ? from_there : open,
                   which == pb_http_refused_per_client ? s->per_client : s->max_connections);
    }
    return MHD_NO;
}

/* MHD_OPTION_NOTIFY_CONNECTION: a started connection claims its address's reservation; a closed
 * one frees its slot. */
static void notify_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    pb_http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct slot *slot = *socket_context;
        if (!slot) return;
        pthread_mutex_lock(&s->lock);
        slot->state = slot_free;
        slot->fd = -1;
        pthread_mutex_unlock(&s->lock);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *a = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const union MHD_ConnectionInfo *f = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    int family = 0;
    unsigned char address[16];
    if (!a || !f || !address_key(a->client_addr, &family, address)) return;
    int64_t now = now_ms(s);
    pthread_mutex_lock(&s->lock);
    struct slot *claimed = NULL, *free_slot = NULL;
    for (unsigned i = 0; i < s->capacity && !claimed; i++) {
        struct slot *slot = &s->slots[i];
        if (slot->state == slot_reserved && same_address(slot, family, address)) claimed = slot;
        else if (slot->state == slot_free && !free_slot) free_slot = slot;
    }
    if (!claimed) claimed = free_slot;   /* its reservation given up already: kept track of if there is room */
    if (claimed) {
        claimed->state = slot_waiting;
        claimed->fd = f->connect_fd;
        claimed->since = now;
        claimed->family = family;
        memcpy(claimed->address, address, 16);
    }
    pthread_mutex_unlock(&s->lock);
    *socket_context = claimed;
}

static struct slot *slot_of(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info ? info->socket_context : NULL;
}

/* The request has arrived whole: busy until answered. 0 when the connection is being closed by
 * the limits (nothing more is answered on it). */
static int request_arrived(pb_http_server *s, struct MHD_Connection *connection) {
    struct slot *slot = slot_of(connection);
    if (!slot) return 1;
    pthread_mutex_lock(&s->lock);
    int closing = slot->state == slot_closing;
    if (slot->state == slot_waiting) slot->state = slot_busy;
    pthread_mutex_unlock(&s->lock);
    return !closing;
}

/* Every 250 ms: connections whose request has not arrived whole within the deadline are shut
 * down; reservations never claimed are freed. */
static void *reaper(void *arg) {
    pb_http_server *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += reaper_period_ms * 1000000L;
        if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
        pthread_cond_timedwait(&s->wake, &s->lock, &until);
        if (s->stopping) break;
        int64_t now = now_ms(s);
        for (unsigned i = 0; i < s->capacity; i++) {
            struct slot *slot = &s->slots[i];
            if (slot->state == slot_waiting && now - slot->since >= s->deadline_ms) {
                shutdown(slot->fd, SHUT_RDWR);
                slot->state = slot_closing;
                s->counts.closed_slow++;
            } else if (slot->state == slot_reserved && now - slot->since >= reservation_ms) {
                slot->state = slot_free;
            }
        }
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

/* A POST's state: its post processor and the fields decoded so far. */
struct post {
    struct MHD_PostProcessor *processor;
    size_t read;            /* body bytes seen */
    int open;               /* a value is being appended to */
    pb_http_form form;
    char fields[pb_http_form_max];
};

static void append(struct post *p, const char *bytes, size_t n) {
    size_t room = sizeof p->fields - p->form.length;
    if (n > room) { p->form.overflow = 1; n = room; }
    memcpy(p->fields + p->form.length, bytes, n);
    p->form.length += n;
}

static enum MHD_Result field(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename, const char *content_type,
                             const char *transfer_encoding, const char *data, uint64_t off, size_t size) {
    (void)kind; (void)filename; (void)content_type; (void)transfer_encoding;
    struct post *p = cls;
    if (off == 0) {
        if (p->open) append(p, "", 1);
        append(p, key, strlen(key) + 1);
        p->open = 1;
    }
    append(p, data, size);
    return p->form.overflow ? MHD_NO : MHD_YES;
}

/* A request's state (libmicrohttpd's per-request pointer), from its request line on: its target's path as the
 * client sent it (not percent-decoded, not cut at a NUL; without the query), and a POST's form. */
struct request {
    char path[pb_http_raw_path_max + 2];   /* one byte more than routed: a longer path stays longer, and routes nowhere */
    size_t target_length;                  /* strlen of the target handed to raw_uri (path and query) */
    int headers_seen;                      /* the access callback ran once (the headers) */
    struct post *post;                     /* NULL unless a POST */
};

/* MHD_OPTION_URI_LOG_CALLBACK: called with the request line's target before libmicrohttpd decodes it;
 * what it returns is the request's pointer. NULL (no memory) makes the access callback close the connection.
 * An absolute-form target (RFC 9112 §3.2.2, which a server must accept: http://HOST[:PORT]/PATH?QUERY)
 * is routed on its path, "/" when it has none; the authority is not looked at. */
static void *raw_uri(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls; (void)connection;
    struct request *r = calloc(1, sizeof *r);
    if (!r || !uri) return r;
    r->target_length = strlen(uri);
    const char *path = uri;
    if (strncasecmp(path, "http://", 7) == 0) path += 7;
    else if (strncasecmp(path, "https://", 8) == 0) path += 8;
    if (path != uri) path += strcspn(path, "/?");
    size_t n = strcspn(path, "?");
    if (n > pb_http_raw_path_max + 1) n = pb_http_raw_path_max + 1;
    if (n == 0 && path != uri) { path = "/"; n = 1; }
    memcpy(r->path, path, n);
    r->path[n] = 0;
    return r;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **request) {
    pb_http_server *s = cls;
    struct context *c = &s->c;
    struct request *r = *request;
    if (r == NULL) return MHD_NO;   /* no state: out of memory in raw_uri */
    if (!r->headers_seen) {
        /* First call: the headers only. Answering here would make libmicrohttpd close the connection
         * (it cannot know whether a body follows): the answer comes with the last call, so keep-alive works. */
        r->headers_seen = 1;
        /* libmicrohttpd hands raw_uri the target as a C string, so a NUL byte sent in it (not %00) cut it
         * short: /p/TOKEN<NUL>.jpg came as /p/TOKEN. The target's true length is where its request line
         * puts the version (url and version point into that line: target, its NUL, version); a target
         * shorter than that had a NUL in it and routes nowhere (an empty path). */
        if (url && version && version[0]) {
            uintptr_t from = (uintptr_t)url, to = (uintptr_t)version;
            if (to > from && to - from - 1 != r->target_length) r->path[0] = 0;
        }
        if (strcmp(method, "POST") == 0) {
            struct post *p = calloc(1, sizeof *p);
            if (!p) return MHD_NO;
            p->form.fields = p->fields;
            /* NULL for a body that is not a form: its fields stay empty. */
            p->processor = MHD_create_post_processor(connection, 1024, field, p);
            r->post = p;
        }
        return MHD_YES;
    }
    struct post *p = r->post;
    if (*upload_data_size != 0) {
        if (p) {
            p->read += *upload_data_size;
            if (p->read > pb_http_form_max) p->form.overflow = 1;
            else if (p->processor && !p->form.overflow) MHD_post_process(p->processor, upload_data, *upload_data_size);
        }
        *upload_data_size = 0;   /* read (and, past the limit or not a POST, dropped) */
        return MHD_YES;
    }
    if (p && p->open) { append(p, "", 1); p->open = 0; }
    if (!request_arrived(s, connection)) return MHD_NO;
    (void)url;   /* decoded and cut at a NUL by libmicrohttpd: routed on the raw path instead */
    return c->handler(c->context, connection, method, r->path, p ? &p->form : NULL) ? MHD_YES : MHD_NO;
}

/* The request is over (answered, or its connection closed): a POST's state freed; the connection
 * waits for its next request from now. */
static void completed(void *cls, struct MHD_Connection *connection, void **request, enum MHD_RequestTerminationCode code) {
    (void)code;
    pb_http_server *s = cls;
    struct slot *slot = slot_of(connection);
    if (slot) {
        int64_t now = now_ms(s);
        pthread_mutex_lock(&s->lock);
        if (slot->state == slot_busy) { slot->state = slot_waiting; slot->since = now; }
        pthread_mutex_unlock(&s->lock);
    }
    struct request *r = *request;
    if (r) {
        if (r->post && r->post->processor) MHD_destroy_post_processor(r->post->processor);
        free(r->post);
        free(r);
    }
    *request = NULL;
}

/* The messages libmicrohttpd said lately: each said at most once a minute (a client can make it
 * say one per connection), the next time with the count of those left out. Keyed by their first
 * 40 characters; 16 kept, the oldest forgotten. */
enum { said_kept = 16, said_key = 40, said_every_ms = 60000 };
static struct { char key[said_key + 1]; int64_t at; unsigned long left_out; } said[said_kept];
static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;

/* libmicrohttpd's own messages (failed sends, accept errors) to stderr as the journal reads
 * them (<4> warning; a send a client cut short <7> debug), each at most once a minute; the failed bind is left out: pb_http_start's caller says it in its own words,
 * every 2 s while it waits for an address. */
static void pb_http_log(void *cls, const char *format, va_list ap) {
    (void)cls;
    char text[512];
    vsnprintf(text, sizeof text, format, ap);
    if (strncmp(text, "Failed to bind to port", 22) == 0) return;
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n') text[--n] = 0;
    int64_t now = monotonic_ms();
    unsigned long left_out = 0;
    pthread_mutex_lock(&said_lock);
    int found = -1, oldest = 0;
    for (int i = 0; i < said_kept; i++) {
        if (strncmp(said[i].key, text, said_key) == 0 && said[i].key[0]) { found = i; break; }
        if (said[i].at < said[oldest].at) oldest = i;
    }
    if (found >= 0 && now - said[found].at < said_every_ms) {
        said[found].left_out++;
        pthread_mutex_unlock(&said_lock);
        return;
    }
    if (found < 0) {
        found = oldest;
        snprintf(said[found].key, sizeof said[found].key, "%.*s", (int)said_key, text);
        said[found].left_out = 0;
    }
    left_out = said[found].left_out;
    said[found].left_out = 0;
    said[found].at = now;
    pthread_mutex_unlock(&said_lock);
    /* A guest who closes the page mid-download, or a connection closed mid-request (by its client,
     * or by the request deadline), is no warning: debug (<7>). */
    int priority = strncmp(text, "Failed to send", 14) == 0 || strncmp(text, "Connection socket is closed", 27) == 0 ? 7 : 4;
    if (left_out) fprintf(stderr, "<%d>photobooth-gallery: libmicrohttpd: %s (and %lu more like it in the last minute, not logged)\n", priority, text, left_out);
    else fprintf(stderr, "<%d>photobooth-gallery: libmicrohttpd: %s\n", priority, text);
}

pb_http_server *pb_http_start(const pb_http_options *o, pb_http_handler handler, void *context, char *why, size_t why_len) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(o->port);
    if (inet_pton(AF_INET, o->address, &addr.sin_addr) != 1) {
        snprintf(why, why_len, "'%s' is not an IPv4 address (use 0.0.0.0 for every interface, or one of the booth's addresses)", o->address);
        errno = EINVAL;
        return NULL;
    }
    signal(SIGPIPE, SIG_IGN);
    pb_http_server *server = calloc(1, sizeof *server);
    unsigned max = o->max_connections ? o->max_connections : 1;
    /* Room for max open, as many being closed, and reservations. */
    unsigned capacity = 2 * max + 64;
    struct slot *slots = calloc(capacity, sizeof *slots);
    if (!server || !slots) { free(server); free(slots); snprintf(why, why_len, "out of memory"); errno = ENOMEM; return NULL; }
    struct context *c = &server->c;
    c->handler = handler;
    c->context = context;
    server->clock = o->clock;
    server->refused = o->refused;
    server->max_connections = max;
    server->per_client = o->per_ip_connections ? o->per_ip_connections : 1;
    server->deadline_ms = (int64_t)(o->timeout_seconds ? o->timeout_seconds : 1) * 1000;
    server->slots = slots;
    server->capacity = capacity;
    pthread_mutex_init(&server->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&server->wake, &ca);
    pthread_condattr_destroy(&ca);
    unsigned threads = o->threads ? o->threads : 1;
    errno = 0;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, o->port,
        accept_policy, server, access_handler, server,
        MHD_OPTION_EXTERNAL_LOGGER, pb_http_log, NULL,   /* first: libmicrohttpd asks for it so */
        MHD_OPTION_NOTIFY_COMPLETED, completed, server,
        MHD_OPTION_NOTIFY_CONNECTION, notify_connection, server,
        MHD_OPTION_URI_LOG_CALLBACK, raw_uri, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        /* The limits are the accept policy's; libmicrohttpd's, shared out among its threads, only
         * a backstop no thread reaches however the connections fall among them. */
        MHD_OPTION_CONNECTION_LIMIT, capacity * threads,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)o->timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->memory_per_connection,
        /* The program ignores SIGPIPE (pb_http_start does): libmicrohttpd may then use sendfile. */
        MHD_OPTION_SIGPIPE_HANDLED_BY_APP, (int)1,
        MHD_OPTION_END);
    if (!d) {
        int e = errno ? errno : EADDRINUSE;
        snprintf(why, why_len, "cannot listen on %s:%u: %s", o->address, (unsigned)o->port, strerror(e));
        pthread_cond_destroy(&server->wake);
        pthread_mutex_destroy(&server->lock);
        free(slots);
        free(server);
        errno = e;
        return NULL;
    }
    server->daemon = d;
    int e = pthread_create(&server->reaper, NULL, reaper, server);
    if (e != 0) {
        snprintf(why, why_len, "cannot start the thread that closes slow requests: %s", strerror(e));
        pb_http_stop(server);
        errno = e;
        return NULL;
    }
    server->reaper_started = 1;
    return server;
}

uint16_t pb_http_port(pb_http_server *server) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

void pb_http_client_address(struct MHD_Connection *connection, char *out, size_t len) {
    out[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr) return;
    const struct sockaddr *sa = info->client_addr;
    if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)len);
    else if (sa->sa_family == AF_INET6) inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, (socklen_t)len);
}

void pb_http_counts(pb_http_server *server, pb_http_counters *out) {
    memset(out, 0, sizeof *out);
    if (!server) return;
    pthread_mutex_lock(&server->lock);
    *out = server->counts;
    out->max_connections = server->max_connections;
    out->per_ip_connections = server->per_client;
    for (unsigned i = 0; i < server->capacity; i++) {
        if (server->slots[i].state == slot_waiting || server->slots[i].state == slot_busy) out->open++;
    }
    pthread_mutex_unlock(&server->lock);
}

void pb_http_stop(pb_http_server *server) {
    if (!server) return;
    if (server->reaper_started) {
        pthread_mutex_lock(&server->lock);
        server->stopping = 1;
        pthread_cond_signal(&server->wake);
        pthread_mutex_unlock(&server->lock);
        pthread_join(server->reaper, NULL);
    }
    MHD_stop_daemon(server->daemon);
    pthread_cond_destroy(&server->wake);
    pthread_mutex_destroy(&server->lock);
    free(server->slots);
    free(server);
}


int pb_http_date(const char *text, int64_t *seconds) {
    static const char *const formats[] = {"%a, %d %b %Y %H:%M:%S GMT", "%A, %d-%b-%y %H:%M:%S GMT", "%a %b %e %H:%M:%S %Y"};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        struct tm tm;
        memset(&tm, 0, sizeof tm);
        const char *end = strptime(text, formats[i], &tm);
        if (!end || *end != 0) continue;
        errno = 0;
        time_t t = timegm(&tm);
        if (t == (time_t)-1 && errno != 0) return 0;
        *seconds = (int64_t)t;
        return 1;
    }
    return 0;
}

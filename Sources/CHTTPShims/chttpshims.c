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
#include <time.h>
#include <sys/socket.h>
#include <microhttpd.h>

struct context { pb_http_handler handler; void *context; };
struct pb_http_server { struct MHD_Daemon *daemon; struct context c; };

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
    int headers_seen;                      /* the access callback ran once (the headers) */
    struct post *post;                     /* NULL unless a POST */
};

/* MHD_OPTION_URI_LOG_CALLBACK: called with the request line's target before libmicrohttpd decodes it;
 * what it returns is the request's pointer. NULL (no memory) makes the access callback close the connection. */
static void *raw_uri(void *cls, const char *uri, struct MHD_Connection *connection) {
    (void)cls; (void)connection;
    struct request *r = calloc(1, sizeof *r);
    if (!r || !uri) return r;
    size_t n = strcspn(uri, "?");
    if (n > pb_http_raw_path_max + 1) n = pb_http_raw_path_max + 1;
    memcpy(r->path, uri, n);
    r->path[n] = 0;
    return r;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **request) {
    (void)version;
    struct context *c = cls;
    struct request *r = *request;
    if (r == NULL) return MHD_NO;   /* no state: out of memory in raw_uri */
    if (!r->headers_seen) {
        /* First call: the headers only. Answering here would make libmicrohttpd close the connection
         * (it cannot know whether a body follows): the answer comes with the last call, so keep-alive works. */
        r->headers_seen = 1;
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
    (void)url;   /* decoded and cut at a NUL by libmicrohttpd: routed on the raw path instead */
    return c->handler(c->context, connection, method, r->path, p ? &p->form : NULL) ? MHD_YES : MHD_NO;
}

/* The request is over (answered, or its connection closed): a POST's state freed. */
static void completed(void *cls, struct MHD_Connection *connection, void **request, enum MHD_RequestTerminationCode code) {
    (void)cls; (void)connection; (void)code;
    struct request *r = *request;
    if (r) {
        if (r->post && r->post->processor) MHD_destroy_post_processor(r->post->processor);
        free(r->post);
        free(r);
    }
    *request = NULL;
}

/* libmicrohttpd's own messages (connection limits, failed sends) to stderr as the journal reads
 * them (<4> warning; a send a client cut short <7> debug); the failed bind is left out: pb_http_start's caller says it in its own words,
 * every 2 s while it waits for an address. */
static void pb_http_log(void *cls, const char *format, va_list ap) {
    (void)cls;
    char text[512];
    vsnprintf(text, sizeof text, format, ap);
    if (strncmp(text, "Failed to bind to port", 22) == 0) return;
    size_t n = strlen(text);
    while (n > 0 && text[n - 1] == '\n') text[--n] = 0;
    /* A guest who closes the page mid-download is no warning: debug (<7>). */
    int priority = strncmp(text, "Failed to send", 14) == 0 ? 7 : 4;
    fprintf(stderr, "<%d>photobooth-gallery: libmicrohttpd: %s\n", priority, text);
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
    if (!server) { snprintf(why, why_len, "out of memory"); errno = ENOMEM; return NULL; }
    struct context *c = &server->c;
    c->handler = handler;
    c->context = context;
    errno = 0;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, o->port, NULL, NULL, access_handler, c,
        MHD_OPTION_EXTERNAL_LOGGER, pb_http_log, NULL,   /* first: libmicrohttpd asks for it so */
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
        MHD_OPTION_URI_LOG_CALLBACK, raw_uri, NULL,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(o->threads ? o->threads : 1),
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)o->max_connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)o->per_ip_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)o->timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)o->memory_per_connection,
        /* The program ignores SIGPIPE (pb_http_start does): libmicrohttpd may then use sendfile. */
        MHD_OPTION_SIGPIPE_HANDLED_BY_APP, (int)1,
        MHD_OPTION_END);
    if (!d) {
        int e = errno ? errno : EADDRINUSE;
        snprintf(why, why_len, "cannot listen on %s:%u: %s", o->address, (unsigned)o->port, strerror(e));
        free(server);
        errno = e;
        return NULL;
    }
    server->daemon = d;
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

void pb_http_stop(pb_http_server *server) {
    if (!server) return;
    MHD_stop_daemon(server->daemon);
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

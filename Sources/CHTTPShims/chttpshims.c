#include <stdarg.h>
#include "chttpshims.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <microhttpd.h>

struct context { pb_http_handler handler; void *context; };
struct pb_http_server { struct MHD_Daemon *daemon; struct context c; };

/* The request's marker: the access callback runs once for the headers and again per body chunk. */
static int seen;

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *connection, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size, void **request) {
    (void)version; (void)upload_data;
    struct context *c = cls;
    if (*request == NULL) {
        /* First call: the headers only. Answering here would make libmicrohttpd close the connection
         * (it cannot know whether a body follows): the answer comes with the last call, so keep-alive works. */
        *request = &seen;
        return MHD_YES;
    }
    if (*upload_data_size != 0) { *upload_data_size = 0; return MHD_YES; }   /* a body: read and dropped */
    return c->handler(c->context, connection, method, url) ? MHD_YES : MHD_NO;
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
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG, o->port, NULL, NULL, access_handler, c,
        MHD_OPTION_EXTERNAL_LOGGER, pb_http_log, NULL,   /* first: libmicrohttpd asks for it so */
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


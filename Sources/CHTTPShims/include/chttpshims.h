// photobooth-gallery's HTTP server through libmicrohttpd: MHD_start_daemon and
// MHD_get_connection_info are variadic, which Swift cannot call, so they are called here.
#ifndef CHTTPSHIMS_H
#define CHTTPSHIMS_H
#include <stddef.h>
#include <stdint.h>

struct MHD_Connection;
/// A running server; opaque.
typedef struct pb_http_server pb_http_server;

/// A POST's form fields (application/x-www-form-urlencoded or multipart/form-data), decoded by
/// libmicrohttpd's post processor: `fields` holds `key\0value\0` pairs, `length` bytes in all;
/// `overflow` is 1 when the body passed `pb_http_form_max` bytes (the fields then stop there).
typedef struct {
    const char *fields;
    size_t length;
    int overflow;
} pb_http_form;

/// Bytes of a POST body read at most; the rest is read and dropped.
enum { pb_http_form_max = 2048 };

/// Bytes of a request target's path handed to the handler at most; a longer path is handed over
/// cut at one byte more (so it is still longer than this, and routes nowhere).
enum { pb_http_raw_path_max = 256 };

/// Called on one of the server's threads once the request has arrived (its headers, and a POST's
/// form: any other body is read and dropped; `form` is NULL for a request that is not a POST), and
/// again each time a connection suspended by the handler (MHD_suspend_connection) is resumed.
/// `url` is the request target's path exactly as the client sent it (MHD_OPTION_URI_LOG_CALLBACK:
/// not percent-decoded, not cut at an encoded NUL, without `?` and the query; an absolute-form target's path, "/" when
/// it has none; empty for a target with a NUL byte in it, so it routes nowhere; at most
/// `pb_http_raw_path_max` + 1 bytes). Queue a response with MHD_queue_response and return 1, suspend the connection and return 1, or
/// return 0 to close the connection.
typedef int (*pb_http_handler)(void *context, struct MHD_Connection *connection, const char *method, const char *url,
                               const pb_http_form *form);

/// Which limit refused a connection (``pb_http_refused``).
enum { pb_http_refused_per_client = 1, pb_http_refused_full = 2 };

/// Milliseconds on the server's clock (CLOCK_MONOTONIC, or a test's), for the request deadline.
typedef int64_t (*pb_http_clock)(void *context);
/// Called on a server thread when a connection is refused, before it is closed: the client's
/// address as text, which limit (`pb_http_refused_*`), how many connections it (per client) or the
/// server (full) had open, and the limit. Must not block.
typedef void (*pb_http_refused)(void *context, const char *address, int which, unsigned open, unsigned limit);

/// What the server is started with.
typedef struct {
    const char *address;            ///< IPv4 address to bind ("0.0.0.0": every interface)
    uint16_t port;                  ///< TCP port
    unsigned threads;               ///< polling threads (MHD_OPTION_THREAD_POOL_SIZE)
    unsigned max_connections;       ///< connections open at once, kept by the accept policy (MHD_AcceptPolicyCallback)
    unsigned per_ip_connections;    ///< connections open at once from one address, kept by the accept policy
    unsigned timeout_seconds;       ///< MHD_OPTION_CONNECTION_TIMEOUT (idle connections closed), and the request deadline:
                                    ///< a request must arrive whole within it of its connection's start or previous answer
    size_t memory_per_connection;   ///< MHD_OPTION_CONNECTION_MEMORY_LIMIT: the request line and headers must fit
    pb_http_clock clock;            ///< the deadline's clock, called with the handler's context; NULL: CLOCK_MONOTONIC
    pb_http_refused refused;        ///< told of each refused connection, with the handler's context; may be NULL
} pb_http_options;

/// Connections refused or closed by the server's own limits since it started.
typedef struct {
    uint64_t refused_per_client;    ///< refused: their address had per_ip_connections open
    uint64_t refused_full;          ///< refused: max_connections open and none of them waiting for a request
    uint64_t closed_for_newcomer;   ///< closed while waiting for a request, the oldest first, to let a new one in
    uint64_t closed_slow;           ///< closed: their request had not arrived whole within timeout_seconds
    unsigned open;                  ///< connections open now
    unsigned max_connections;       ///< the limits in force: max_connections and per_ip_connections as the server
    unsigned per_ip_connections;    ///< keeps them (0 in the options is taken as 1); the one copy, for the refusals' words
} pb_http_counters;

/// Starts the server (MHD_start_daemon with an internal thread pool on epoll and
/// MHD_ALLOW_SUSPEND_RESUME, so a handler may hold a request for a while: the slideshow's long poll; SIGPIPE is ignored from
/// then on, so files go out with sendfile and a client gone is an EPIPE). NULL on failure, with
/// a sentence in `why` (the address unparsable, the port taken: bind's errno, no thread).
/// The connection limits are kept by an accept policy (MHD_AcceptPolicyCallback) and
/// MHD_OPTION_NOTIFY_CONNECTION, so the server knows which limit refused a connection: at
/// max_connections, a new connection closes the one that has waited longest for a request
/// (shutdown(2); its thread closes it) rather than being refused, and a thread of the server's
/// closes a connection whose request has not arrived whole within timeout_seconds (checked every
/// 250 ms), however slowly it trickles in. libmicrohttpd's own messages go to stderr at most once a
/// minute each, with the count of those left out.
pb_http_server *pb_http_start(const pb_http_options *options, pb_http_handler handler, void *context, char *why, size_t why_len);
/// The port the server listens on (the one asked for, or the one given for port 0).
uint16_t pb_http_port(pb_http_server *server);
/// The client's IPv4 or IPv6 address as text ("192.168.1.20"); "" when unknown.
void pb_http_client_address(struct MHD_Connection *connection, char *out, size_t len);
/// The counters now (any thread).
void pb_http_counts(pb_http_server *server, pb_http_counters *out);

/// An HTTP-date (RFC 9110 §5.6.7: IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, or the obsolete
/// RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994`) as seconds since
/// 1970 in `seconds`: 1, or 0 for anything else. strptime (the C locale's English names) and timegm.
int pb_http_date(const char *text, int64_t *seconds);
/// Stops the server: no new connections, the threads joined (MHD_stop_daemon), then frees it.
void pb_http_stop(pb_http_server *server);
#endif

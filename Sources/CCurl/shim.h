// libcurl (Debian's libcurl4-openssl-dev): photoboothctl asks photobooth-gallery's /health.
#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed wrapper each.
static inline CURLcode pb_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode pb_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode pb_curl_set_pointer(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode pb_curl_set_write(CURL *c, size_t (*f)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, f);
}
static inline CURLcode pb_curl_response_code(CURL *c, long *code) { return curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code); }

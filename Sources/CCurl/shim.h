#include <curl/curl.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call; these typed
// wrappers are what the Etcd module calls instead, one per argument type.

static inline CURLcode ccurl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode ccurl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*ccurl_data_callback)(char *buffer, size_t size, size_t count, void *context);
typedef int (*ccurl_xferinfo_callback)(
    void *context, curl_off_t download_total, curl_off_t download_now, curl_off_t upload_total,
    curl_off_t upload_now);

/// For CURLOPT_WRITEFUNCTION, CURLOPT_READFUNCTION and CURLOPT_HEADERFUNCTION.
static inline CURLcode ccurl_setopt_data_callback(
    CURL *handle, CURLoption option, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

/// For CURLOPT_XFERINFOFUNCTION.
static inline CURLcode ccurl_setopt_xferinfo_callback(
    CURL *handle, CURLoption option, ccurl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode ccurl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

static inline CURLcode ccurl_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

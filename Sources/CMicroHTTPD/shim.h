#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Swift cannot call C's variadic functions; these fixed-argument wrappers make the few calls
// HTTPServer needs.

/// Starts a daemon with a thread per connection on `address`, bounded by the given limits.
static inline struct MHD_Daemon *countries_mhd_start(
    const struct sockaddr *address, MHD_AccessHandlerCallback handler, void *handlerContext,
    MHD_RequestCompletedCallback completed, unsigned int connectionLimit,
    unsigned int perAddressLimit, size_t memoryLimit, unsigned int timeoutSeconds) {
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD
        | MHD_USE_ERROR_LOG;
    if (address->sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, handlerContext,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_CONNECTION_LIMIT, connectionLimit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, perAddressLimit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memoryLimit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeoutSeconds,
        MHD_OPTION_NOTIFY_COMPLETED, completed, handlerContext,
        MHD_OPTION_END);
}

/// The port the daemon listens on (the one the system chose for port 0).
static inline uint16_t countries_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

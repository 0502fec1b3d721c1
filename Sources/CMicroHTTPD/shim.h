#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

// Swift cannot call C's variadic functions; these fixed-argument wrappers make the few calls
// HTTPServer needs.

/// Starts an event-driven daemon on `address`: `threads` epoll threads (each serves many
/// connections; a response that waits is suspended, not blocking a thread), bounded by the
/// given limits.
static inline struct MHD_Daemon *countries_mhd_start(
    const struct sockaddr *address, MHD_AcceptPolicyCallback acceptPolicy,
    MHD_AccessHandlerCallback handler, void *handlerContext,
    MHD_RequestCompletedCallback completed, MHD_NotifyConnectionCallback notifyConnection,
    void *(*requestStarted)(void *context, const char *uri, struct MHD_Connection *connection),
    unsigned int connectionLimit, size_t memoryLimit,
    unsigned int timeoutSeconds, unsigned int threads) {
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME;
    if (address->sa_family == AF_INET6) flags |= MHD_USE_IPv6;
    return MHD_start_daemon(
        flags, 0, acceptPolicy, handlerContext, handler, handlerContext,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, connectionLimit,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memoryLimit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeoutSeconds,
        MHD_OPTION_NOTIFY_COMPLETED, completed, handlerContext,
        MHD_OPTION_NOTIFY_CONNECTION, notifyConnection, handlerContext,
        MHD_OPTION_URI_LOG_CALLBACK, requestStarted, handlerContext,
        MHD_OPTION_END);
}

/// The port the daemon listens on (the one the system chose for port 0).
static inline uint16_t countries_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/// The connection's socket, or -1.
static inline int countries_mhd_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

/// The connection's client address, or NULL.
static inline const struct sockaddr *countries_mhd_connection_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info == NULL ? NULL : info->client_addr;
}

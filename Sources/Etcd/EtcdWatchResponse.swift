/// One answer of a watch stream (etcd's `WatchResponse`): the stream's creation, a batch of
/// events, a progress notification, or its cancellation.
struct EtcdWatchResponse: Equatable {
    /// The store's revision when etcd sent the answer.
    var revision: Int64 = 0
    /// Whether this answers the watch's creation.
    var created = false
    /// Whether etcd ended the watch: ``compactRevision`` or ``cancelReason`` says why.
    var canceled = false
    /// The oldest revision etcd still has, when the watch asked for an older one.
    var compactRevision: Int64 = 0
    /// etcd's words for a cancellation.
    var cancelReason = ""
    /// The changes, in revision order.
    var events: [EtcdWatchEvent] = []
}

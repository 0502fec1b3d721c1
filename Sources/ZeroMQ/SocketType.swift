import CZeroMQ

/// The libzmq socket types this module supports (the `ZMQ_PAIR` … `ZMQ_XSUB` constants).
public enum SocketType: Sendable, CaseIterable {
    /// `ZMQ_PAIR`: exclusive pair of peers.
    case pair
    /// `ZMQ_PUB`: publisher, fans messages out to subscribers.
    case pub
    /// `ZMQ_SUB`: subscriber, receives messages matching its subscriptions.
    case sub
    /// `ZMQ_REQ`: request side of a strict send/receive lock-step.
    case req
    /// `ZMQ_REP`: reply side of a strict receive/send lock-step.
    case rep
    /// `ZMQ_DEALER`: asynchronous request side, load-balances outgoing messages.
    case dealer
    /// `ZMQ_ROUTER`: asynchronous reply side, prefixes messages with the peer's routing id.
    case router
    /// `ZMQ_PULL`: receiving end of a pipeline.
    case pull
    /// `ZMQ_PUSH`: sending end of a pipeline.
    case push
    /// `ZMQ_XPUB`: publisher that also receives subscription messages.
    case xpub
    /// `ZMQ_XSUB`: subscriber that subscribes by sending subscription messages.
    case xsub

    /// The libzmq constant for this type.
    var rawValue: Int32 {
        switch self {
        case .pair: ZMQ_PAIR
        case .pub: ZMQ_PUB
        case .sub: ZMQ_SUB
        case .req: ZMQ_REQ
        case .rep: ZMQ_REP
        case .dealer: ZMQ_DEALER
        case .router: ZMQ_ROUTER
        case .pull: ZMQ_PULL
        case .push: ZMQ_PUSH
        case .xpub: ZMQ_XPUB
        case .xsub: ZMQ_XSUB
        }
    }
}

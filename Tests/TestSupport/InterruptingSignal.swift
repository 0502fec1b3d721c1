import Foundation
@preconcurrency import Glibc

/// The signal tests send a thread to interrupt its wait (`EINTR`): SIGUSR1, with a handler that
/// does nothing and no `SA_RESTART`, installed once for the whole test process and never taken
/// back. Tests run in parallel: one that put the default action back while another still sent
/// the signal ended the test process (killed by SIGUSR1).
public enum InterruptingSignal {
    /// The signal's number.
    public static let number = SIGUSR1

    /// Installs the handler the first time it is read; whether it is installed.
    public static var isInstalled: Bool { installation }

    private static let installation: Bool = {
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        return sigaction(number, &action, nil) == 0
    }()

    /// Sends the signal to `thread`.
    public static func send(to thread: pthread_t) {
        pthread_kill(thread, number)
    }
}

import ArgumentParsing

// Each subcommand's declared face: its name, its help and its options, as a protocol whose
// extension supplies them. The executable's subcommand type conforms and adds only its run, so
// the command line's text lives here and the executable parses and wires (docs/ARCHITECTURE.md).

/// `countries keygen`: its name, help and options (``KeygenOptions``).
public protocol KeygenDeclaration: Subcommand where Options == KeygenOptions {}

extension KeygenDeclaration {
    public static var name: String { "keygen" }
    public static var abstract: String { "Make a CURVE key pair: NAME.key (secret, mode 0600) and NAME.pub." }
    public static var discussion: String? {
        """
        Give NAME.pub to the other side: a client's goes in the service's --allow directory, the \
        service's is every client's --server-key. Keep NAME.key private.
        """
    }
    public static var options: Options { Options() }
}

/// `countries backup`: its name, help and options (``BackupOptions``).
public protocol BackupDeclaration: Subcommand where Options == BackupOptions {}

extension BackupDeclaration {
    public static var name: String { "backup" }
    public static var abstract: String {
        "Copy the SQLite store to FILE while the service serves it (SQLite's online backup)."
    }
    public static var discussion: String? {
        """
        The copy is one consistent state (the seq it prints), private (mode 0600) and marked: a \
        service started on it gives it a new store identity, so subscribers start over rather than \
        take it for the store it was copied from. To restore, stop the service, move the copy to \
        the --db path and start it. Replicated mode (--etcd) keeps no SQLite store: use \
        `etcdctl snapshot save` (docs/HA.md, "Backup and restore").
        """
    }
    public static var options: Options { Options() }
}

/// `countries relay`: its name, help and options (``RelayOptions``).
public protocol RelayDeclaration: Subcommand where Options == RelayOptions {}

extension RelayDeclaration {
    public static var name: String { "relay" }
    public static var abstract: String { "Forward the event stream to more subscribers (XSUB/XPUB proxy)." }
    public static var discussion: String? {
        """
        Subscribers point --events at the relay and --command at the service. With --curve-key the \
        relay requires CURVE from its subscribers (--allow/--allow-read), and with --server-key it \
        also uses its key toward a CURVE upstream, whose allow-list must hold the relay's .pub.
        """
    }
    public static var options: Options { Options() }
}

/// `countries list`: its name, help and options (``JSONRequestOptions``).
public protocol ListDeclaration: Subcommand where Options == JSONRequestOptions {}

extension ListDeclaration {
    public static var name: String { "list" }
    public static var abstract: String { "Print every country, in order." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries get`: its name, help and options (``GetOptions``).
public protocol GetDeclaration: Subcommand where Options == GetOptions {}

extension GetDeclaration {
    public static var name: String { "get" }
    public static var abstract: String { "Print one country." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries count`: its name, help and options (``JSONRequestOptions``).
public protocol CountDeclaration: Subcommand where Options == JSONRequestOptions {}

extension CountDeclaration {
    public static var name: String { "count" }
    public static var abstract: String { "Print how many countries there are." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries toggle`: its name, help and options (``ToggleOptions``).
public protocol ToggleDeclaration: Subcommand where Options == ToggleOptions {}

extension ToggleDeclaration {
    public static var name: String { "toggle" }
    public static var abstract: String { "Flip the visited flag of one or more countries." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries set`: its name, help and options (``SetOptions``).
public protocol SetDeclaration: Subcommand where Options == SetOptions {}

extension SetDeclaration {
    public static var name: String { "set" }
    public static var abstract: String { "Set the visited flag of a country." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries add`: its name, help and options (``AddOptions``).
public protocol AddDeclaration: Subcommand where Options == AddOptions {}

extension AddDeclaration {
    public static var name: String { "add" }
    public static var abstract: String { "Append a country to the list." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries remove`: its name, help and options (``RemoveOptions``).
public protocol RemoveDeclaration: Subcommand where Options == RemoveOptions {}

extension RemoveDeclaration {
    public static var name: String { "remove" }
    public static var abstract: String { "Remove a country; the rows after it move up one." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries reset`: its name, help and options (``ResetOptions``).
public protocol ResetDeclaration: Subcommand where Options == ResetOptions {}

extension ResetDeclaration {
    public static var name: String { "reset" }
    public static var abstract: String { "Put back the list the service was started with." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries history`: its name, help and options (``HistoryOptions``).
public protocol HistoryDeclaration: Subcommand where Options == HistoryOptions {}

extension HistoryDeclaration {
    public static var name: String { "history" }
    public static var abstract: String { "Print the events after a seq." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries status`: its name, help and options (``JSONRequestOptions``).
public protocol StatusDeclaration: Subcommand where Options == JSONRequestOptions {}

extension StatusDeclaration {
    public static var name: String { "status" }
    public static var abstract: String { "Print the service's status." }
    public static var options: Options { Options(connection: .requests(by: name)) }
}

/// `countries serve`: its name, help and options (``ServeOptions``).
public protocol ServeDeclaration: Subcommand where Options == ServeOptions {}

extension ServeDeclaration {
    public static var name: String { "serve" }
    public static var abstract: String { "Run the state service." }
    public static var discussion: String? {
        """
        Owns the list, answers commands on the command endpoint and publishes every change on the \
        event endpoint. Stops cleanly on SIGINT or SIGTERM.
        """
    }
    public static var options: Options { Options() }
}

/// `countries events`: its name, help and options (``EventsOptions``).
public protocol EventsDeclaration: Subcommand where Options == EventsOptions {}

extension EventsDeclaration {
    public static var name: String { "events" }
    public static var abstract: String { "Print events as they happen, one per line." }
    public static var discussion: String? {
        "Runs until interrupted, or until --count events have been printed."
    }
    public static var options: Options { Options(name: name) }
}

/// `countries watch`: its name, help and options (``WatchOptions``).
public protocol WatchDeclaration: Subcommand where Options == WatchOptions {}

extension WatchDeclaration {
    public static var name: String { "watch" }
    public static var abstract: String { "Show the list live; it redraws on every change." }
    public static var discussion: String? {
        """
        On a terminal: a live table (q quits). Otherwise, the whole table after every change, \
        or with --json one line per change: {"countries": [...], "seq": S}, the first being the snapshot.
        """
    }
    public static var options: Options { Options(name: name) }
}

/// `countries select`: its name, help and options (``SelectOptions``).
public protocol SelectDeclaration: Subcommand where Options == SelectOptions {}

extension SelectDeclaration {
    public static var name: String { "select" }
    public static var abstract: String { "Pick countries in a live table; Space or Enter toggles." }
    public static var discussion: String? {
        "Keys: Up/Down or j/k, PgUp/PgDn, Home/End move; Space or Enter toggles; q quits."
    }
    public static var options: Options { Options(name: name) }
}

/// `countries on-change`: its name, help and options (``OnChangeOptions``).
public protocol OnChangeDeclaration: Subcommand where Options == OnChangeOptions {}

extension OnChangeDeclaration {
    public static var name: String { "on-change" }
    public static var abstract: String { "Run a command for every change, in order." }
    public static var discussion: String? {
        """
        COMMAND runs once per event, never two at once, with COUNTRIES_SEQ, COUNTRIES_EVENT \
        (changed, added, removed, reset), COUNTRY_INDEX, COUNTRY_NAME and COUNTRY_VISITED in its \
        environment and the event's JSON on its stdin. A failing command is logged; the next event still runs.
        """
    }
    public static var trailingValueName: String? { "command" }
    public static var options: Options { Options(name: name) }
}

/// `countries web`: its name, help and options (``WebOptions``).
public protocol WebDeclaration: Subcommand where Options == WebOptions {}

extension WebDeclaration {
    public static var name: String { "web" }
    public static var abstract: String { "Serve the live table to browsers; a click toggles." }
    public static var discussion: String? {
        """
        One page at /, its changes pushed as Server-Sent Events (/events), toggles posted to /toggle. \
        Loopback only unless --insecure; with --token FILE a page must be opened with ?token=TOKEN. \
        Runs until interrupted.
        """
    }
    public static var options: Options { Options(name: name) }
}

/// `countries completion`: its name, help and options (``CompletionOptions``).
public protocol CompletionDeclaration: Subcommand where Options == CompletionOptions {}

extension CompletionDeclaration {
    public static var name: String { "completion" }
    public static var abstract: String { "Print the completion script for bash, zsh or fish." }
    public static var discussion: String? {
        """
        Made from the same declarations as --help. Load it in bash with: \
        source <(countries completion bash). scripts/install puts all three where the shells look.
        """
    }
    public static var options: Options { Options() }
}

/// `countries man`: its name and help; it takes no options.
public protocol ManDeclaration: Subcommand where Options == NoOptions {}

extension ManDeclaration {
    public static var name: String { "man" }
    public static var abstract: String { "Print the manual page (roff, section 1)." }
    public static var discussion: String? {
        "Pipe it to man -l - to read it. Made from the same declarations as --help."
    }
    public static var options: Options { Options() }
}

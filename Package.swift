// swift-tools-version:6.0
import PackageDescription

/// The same strict settings for every target, so no module drifts into a looser dialect.
let strictSettings: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "countries",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "countries", targets: ["countries"]),
        .executable(name: "countries-bench", targets: ["countries-bench"]),
        .library(name: "CountriesCore", targets: ["CountriesCore"]),
        // A live subscriber (the subscription machine and its driver) for Swift programs of
        // your own: docs/EMBEDDING.md.
        .library(name: "CountriesClient", targets: ["CountriesClient"]),
        .library(name: "ZeroMQ", targets: ["ZeroMQ"]),
    ],
    targets: [
        // C libraries from Debian's packages, found with pkg-config.
        // No `pkgConfig: "libzmq"`: Debian's libzmq.pc adds `-isystem` flags (Kerberos, PGM) that
        // SwiftPM refuses with a warning on every build; zmq.h and libzmq.so sit on the default
        // paths, so the module map's `link "zmq"` is all it takes.
        .systemLibrary(
            name: "CZeroMQ",
            providers: [.apt(["libzmq3-dev"])]
        ),
        // libcurl speaks HTTP to etcd's JSON gateway. Debian's libcurl.pc adds only
        // -I/usr/include/x86_64-linux-gnu, which SwiftPM takes without a warning.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // libmicrohttpd serves `countries web`'s page and event streams.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),

        // Thin Swift faces on the C libraries; they know nothing of countries.
        .target(name: "ZeroMQ", dependencies: ["CZeroMQ", "SystemSupport"], swiftSettings: strictSettings),
        .target(name: "SQLite", dependencies: ["CSQLite"], swiftSettings: strictSettings),
        // An HTTP server with bounded Server-Sent Events streams; it knows nothing of countries.
        .target(
            name: "HTTPServer", dependencies: ["CMicroHTTPD", "SystemSupport"], swiftSettings: strictSettings),
        .target(name: "ArgumentParsing", swiftSettings: strictSettings),
        .target(name: "SystemSupport", swiftSettings: strictSettings),
        // The Prometheus text format: the metrics of a snapshot written, and read back strictly.
        .target(name: "Metrics", dependencies: ["SystemSupport"], swiftSettings: strictSettings),
        // The project's one JSON codec: a strict parser and a byte-exact writer.
        .target(name: "JSON", swiftSettings: strictSettings),
        // An etcd v3 client through its JSON gateway (keys, txns, watches, members); it knows
        // nothing of countries.
        .target(
            name: "Etcd", dependencies: ["CCurl", "JSON", "SystemSupport"], swiftSettings: strictSettings),

        // The domain: plain values and functions, no sockets, files or terminals.
        .target(name: "CountriesCore", dependencies: ["JSON"], swiftSettings: strictSettings),

        // The layers above the core.
        // What every store shares: the store protocol, its batch and errors, the request ids kept.
        .target(name: "CountriesStore", dependencies: ["CountriesCore"], swiftSettings: strictSettings),
        // What the service and the relay share: their sockets set up, secured and closed, the
        // event socket's bounds per subscriber, the stop source, `ServiceError`.
        .target(
            name: "CountriesSockets",
            dependencies: ["CountriesCore", "SystemSupport", "ZeroMQ"],
            swiftSettings: strictSettings
        ),
        // Replicated mode: the store on etcd, its layout, and a replica's etcd threads.
        .target(
            name: "CountriesReplication",
            dependencies: ["CountriesCore", "CountriesStore", "Etcd", "SystemSupport"],
            swiftSettings: strictSettings
        ),
        // `countries relay`: XSUB to a manual XPUB, forwarding only the protocol's messages.
        .target(
            name: "CountriesRelay",
            dependencies: ["CountriesCore", "CountriesSockets", "Metrics", "SystemSupport", "ZeroMQ"],
            swiftSettings: strictSettings
        ),
        // The service loop, command handling, the local stores and the choice of store.
        .target(
            name: "CountriesService",
            dependencies: [
                "CountriesCore", "CountriesStore", "CountriesSockets", "CountriesReplication", "ZeroMQ",
                "SQLite", "SystemSupport", "Metrics",
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CountriesClient",
            dependencies: ["CountriesCore", "JSON", "SystemSupport", "ZeroMQ"],
            swiftSettings: strictSettings
        ),
        .target(
            name: "CountriesTerminal",
            dependencies: ["CountriesCore", "SystemSupport"],
            swiftSettings: strictSettings
        ),
        // The page of `countries web` as a pure model (state in, events for the pages out) and
        // its assets, built into the binary.
        .target(
            name: "CountriesWeb", dependencies: ["CountriesCore", "JSON"], swiftSettings: strictSettings),
        // The live table of `watch` and `select`: a subscription wired to the terminal's screen
        // model (the seeds' view controller), so the terminal layer knows nothing of sockets.
        .target(
            name: "CountriesViews",
            dependencies: [
                "CountriesCore", "CountriesClient", "CountriesTerminal", "CountriesWeb", "HTTPServer",
                "Metrics", "SystemSupport",
            ],
            swiftSettings: strictSettings
        ),
        // The command line: each subcommand as one type (its name, help, options and run), the
        // option groups several share, the registry, and the one table of exit codes.
        .target(
            name: "CountriesCommands",
            dependencies: [
                "ArgumentParsing", "CountriesCore", "CountriesService", "CountriesReplication",
                "CountriesRelay", "CountriesSockets", "CountriesClient", "CountriesTerminal",
                "CountriesViews", "CountriesWeb", "Etcd", "HTTPServer", "Metrics", "SystemSupport", "ZeroMQ",
            ],
            swiftSettings: strictSettings
        ),
        // Parses, runs the subcommand, exits: main.swift alone.
        .executableTarget(
            name: "countries",
            dependencies: ["ArgumentParsing", "CountriesCommands", "SystemSupport"],
            swiftSettings: strictSettings
        ),
        // The one load generator of the bench and the reliability tests: client threads started
        // together, REQ round trips timed, DEALER toggles pipelined, replies and refusals counted.
        .target(
            name: "LoadGeneration",
            dependencies: ["CountriesCore", "CountriesClient", "SystemSupport", "ZeroMQ"],
            swiftSettings: strictSettings
        ),
        // Measures the service against the bare-libzmq floor and Redis, in one run.
        .executableTarget(
            name: "countries-bench",
            dependencies: [
                "ArgumentParsing", "CountriesCore", "CountriesClient", "CountriesTerminal", "Etcd",
                "LoadGeneration", "SystemSupport", "ZeroMQ",
            ],
            swiftSettings: strictSettings
        ),
        // docs/EMBEDDING.md's example, built with the package and run by EmbeddingTests.
        .executableTarget(
            name: "countries-embedding-example",
            dependencies: ["CountriesClient", "CountriesCore", "ZeroMQ"],
            swiftSettings: strictSettings
        ),
        // The libFuzzer target for the request decoder and the state controller (scripts/fuzz);
        // a plain build replays input files instead.
        .executableTarget(
            name: "countries-fuzz",
            dependencies: ["CountriesCore"],
            swiftSettings: strictSettings
        ),

        // The one harness every test suite shares: the binary under test, child processes, scratch
        // directories, tmux, bounded waits, a seeded generator (Tests/TestSupport).
        .target(
            name: "TestSupport", dependencies: ["SystemSupport", "ZeroMQ"], path: "Tests/TestSupport",
            swiftSettings: strictSettings),
        .testTarget(name: "TestSupportTests", dependencies: ["TestSupport"], swiftSettings: strictSettings),
        .testTarget(
            name: "SystemSupportTests", dependencies: ["SystemSupport", "TestSupport"],
            swiftSettings: strictSettings),

        .testTarget(
            name: "ZeroMQTests", dependencies: ["ZeroMQ", "SystemSupport", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["HTTPServer", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(name: "SQLiteTests", dependencies: ["SQLite"], swiftSettings: strictSettings),
        .testTarget(name: "MetricsTests", dependencies: ["Metrics"], swiftSettings: strictSettings),
        // The etcd client against real etcd members (scripts/bootstrap installs etcd 3.4).
        .testTarget(
            name: "EtcdTests", dependencies: ["CCurl", "Etcd", "JSON", "SystemSupport", "TestSupport"],
            swiftSettings: strictSettings),
        .testTarget(
            name: "ArgumentParsingTests",
            dependencies: ["ArgumentParsing", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CountriesCoreTests",
            dependencies: ["CountriesCore", "JSON", "TestSupport"],
            exclude: ["FuzzRegressions"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CountriesStoreTests", dependencies: ["CountriesStore", "CountriesCore"],
            swiftSettings: strictSettings),
        // The etcd store against real etcd members, and a replica's threads as values.
        .testTarget(
            name: "CountriesReplicationTests",
            dependencies: [
                "CountriesReplication", "CountriesStore", "CountriesCore", "Etcd", "SystemSupport",
                "TestSupport",
            ],
            swiftSettings: strictSettings
        ),
        // What the service and the relay share, on real sockets: the subscriber ledger, the
        // relay's forwarding window, dropping one connection.
        .testTarget(
            name: "CountriesSocketsTests",
            dependencies: [
                "CountriesSockets", "CountriesRelay", "CountriesCore", "ZeroMQ", "SystemSupport",
                "TestSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CountriesServiceTests",
            dependencies: [
                "CountriesService", "CountriesStore", "CountriesSockets", "CountriesReplication",
                "CountriesRelay", "CountriesClient", "CountriesCore", "ZeroMQ", "SQLite", "TestSupport",
                "Etcd", "Metrics", "SystemSupport",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CountriesClientTests",
            dependencies: ["CountriesClient", "CountriesCore", "ZeroMQ", "SystemSupport", "TestSupport"],
            swiftSettings: strictSettings
        ),
        // The load generator against an in-process echo server: short, bounded real-socket runs.
        .testTarget(
            name: "LoadGenerationTests",
            dependencies: ["LoadGeneration", "CountriesCore", "SystemSupport", "ZeroMQ", "TestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CountriesWebTests",
            dependencies: ["CountriesWeb", "CountriesCore"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "CountriesTerminalTests",
            dependencies: ["CountriesTerminal", "CountriesCore", "TestSupport"],
            swiftSettings: strictSettings
        ),
        // Replays the fuzz target's kept inputs (Tests/CountriesCoreTests/FuzzRegressions).
        .testTarget(
            name: "CountriesFuzzTests",
            dependencies: ["countries-fuzz"],
            swiftSettings: strictSettings
        ),
        // The command line parsed in-process: the registry, the options, the exit-code table.
        .testTarget(
            name: "CountriesCommandsTests",
            dependencies: [
                "CountriesCommands", "ArgumentParsing", "CountriesCore", "CountriesService",
                "CountriesSockets", "CountriesClient", "CountriesTerminal", "CountriesViews", "SystemSupport",
                "ZeroMQ",
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "countries", "countries-bench", "countries-embedding-example", "ZeroMQ", "CountriesCore",
                "SQLite", "TestSupport", "CountriesClient", "Metrics", "LoadGeneration", "SystemSupport",
            ],
            swiftSettings: strictSettings
        ),
    ]
)

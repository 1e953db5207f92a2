// swift-tools-version:6.0
// hubscript — a sandboxed Lua 5.4 host for Substratal Hub recipes.
// Layout and module boundaries: docs/architecture.md.
import PackageDescription

let package = Package(
    name: "hubscript",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "hubscript", targets: ["hubscript"]),
    ],
    targets: [
        // C boundary: the only targets that see C APIs directly.
        .systemLibrary(
            name: "CLua", path: "Sources/CLua", pkgConfig: "lua5.4",
            providers: [.apt(["liblua5.4-dev"])]),
        .systemLibrary(
            name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CPostgres", path: "Sources/CPostgres", pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"])]),
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),

        // Plain words for file-system errors, shared by the runtime and the client (Foundation only).
        // The scanning core of SystemText's secret masking (a rolling hash per length).
        .target(name: "CSecretScan"),
        .target(name: "SystemText", dependencies: ["CSecretScan"]),
        // The one JSON parser (JSONReader, into any JSONBuilder) and writer (JSONWriter,
        // canonical objects with sorted keys). Foundation only.
        .target(name: "JSONKit"),
        // Generic Lua runtime: knows nothing about the Hub.
        .target(name: "ScriptHost", dependencies: ["CLua", "CLuaChunks", "JSONKit", "SystemText"]),
        // The preludes compiled to Lua bytecode (written by scripts/generate-prelude-bytecode).
        .target(name: "CLuaChunks"),
        // The one SQLite wrapper (journal and sandbox store).
        .target(name: "SQLiteKit", dependencies: ["CSQLite"]),
        // The one libpq wrapper (the PostgreSQL journal and its run locks): connections by
        // URL, parameterized statements, typed rows, transactions, SQLSTATE errors that
        // never show a password. No Lua, no Hub.
        .target(name: "PostgresKit", dependencies: ["CPostgres"]),
        // HTTP/1.1 message types, the small loopback server, and the Hub's webhook signature (libsodium's HMAC-SHA256).
        .target(name: "HTTPKit", dependencies: ["CSodium"]),
        // Cron schedules, time zones, fire planning and job definitions. No Lua.
        .target(name: "Scheduler", dependencies: ["JSONKit"]),
        // The Dispatch client (seed 003 §5). No Lua.
        .target(name: "DispatchClient", dependencies: ["HTTPKit", "JSONKit", "SystemText"]),
        // The emulated Hub and Dispatch services. Only the CLI and tests depend on it.
        .target(name: "HubSandbox", dependencies: ["SQLiteKit", "HTTPKit", "JSONKit"]),
        // The Hub client (transports, auth, retries, pagination), profiles, configuration
        // types, the state directory, credentials and HubConnection. No Lua.
        .target(name: "HubClient", dependencies: ["HTTPKit", "JSONKit", "SystemText", "CCurlEasy"]),
        // One HTTPS exchange through libcurl (loaded on first use) with a CA bundle of the
        // profile's or SSL_CERT_FILE's choosing: URLSession on Linux cannot take one per session.
        .target(name: "CCurlEasy", path: "Sources/CCurlEasy", linkerSettings: [.linkedLibrary("dl")]),
        // SHA-256 with the x86 SHA extensions (the vault's object ids; libsodium's is slower).
        .systemLibrary(name: "CVault", path: "Sources/CVault"),
        // The encrypted vault (libsodium). No Lua.
        .target(name: "Vault", dependencies: ["CSodium", "CVault"]),
        // The journal: runs, writes, recorded reads, fires, trigger events and state, on SQLite
        // or PostgreSQL, and the run locks kept beside it. No Lua: it stores JSON text.
        .target(name: "RunJournal", dependencies: ["HubClient", "SQLiteKit", "PostgresKit", "SystemText", "CSodium"]),
        // Where a run's secrets come from (the vault, the environment) and the handles a recipe holds.
        .target(name: "Secrets", dependencies: ["ScriptHost", "HubClient", "Vault"]),
        // What a recipe calls: the hub, dispatch, state, vault, export, csv and progress modules,
        // the gate, and the write path (idempotency keys, the write coordinator, plans).
        .target(name: "RecipeModules", dependencies: ["ScriptHost", "JSONKit", "HubClient", "RunJournal", "Secrets", "SystemText", "DispatchClient", "Vault", "HTTPKit"]),
        // The configuration file: its evaluation, profiles, Dispatch targets, libraries (git and
        // pins), jobs, triggers and the journal's location, and its trust.
        .target(name: "Configuration", dependencies: ["ScriptHost", "HubClient", "SystemText", "RunJournal", "RecipeModules", "Scheduler", "DispatchClient", "Secrets", "PostgresKit"]),
        // One recipe run against a Hub from start to outcome: passes, resume, plan and apply.
        .target(name: "Runs", dependencies: ["ScriptHost", "HubClient", "SystemText", "RunJournal", "Secrets", "RecipeModules", "Configuration"]),
        // What starts runs unattended: the job scheduler and its fire pool, the webhook trigger listener.
        .target(name: "Automation", dependencies: ["ScriptHost", "HubClient", "HTTPKit", "RunJournal", "Secrets", "Configuration", "Scheduler"]),
        // libcurl and libpq loaded on first use, not at start-up (lazy_load.h): what
        // FoundationNetworking and PostgresKit call, for the statically linked release build.
        .target(name: "CLazyLibraries", path: "Sources/CLazyLibraries", linkerSettings: [.linkedLibrary("dl")]),
        // The Swift runtime's CommandLine hooks, without its /proc/self/maps scan at start-up.
        .target(name: "CProcessArguments"),
        // The thin CLI; it composes the embedded sandbox with the client (EmbeddedSandbox).
        .executableTarget(name: "hubscript", dependencies: ["ScriptHost", "RunJournal", "Secrets", "RecipeModules", "Configuration", "Runs", "Automation", "HubClient", "HubSandbox", "HTTPKit", "DispatchClient", "Vault", "Scheduler", "CLazyLibraries", "CProcessArguments", "SystemText"]),
        // The client side of scripts/bench-client (not installed, not for users).
        .executableTarget(name: "hubscript-bench", dependencies: ["HubClient", "DispatchClient", "HTTPKit"], path: "Sources/hubscript-bench"),
        // Prints Sources/CLuaChunks/prelude_bytecode.c for scripts/generate-prelude-bytecode (not installed).
        .executableTarget(name: "prelude-bytecode", dependencies: ["ScriptHost"], path: "Sources/prelude-bytecode"),

        // What several test targets share (the PostgreSQL test server). Not shipped.
        .target(name: "TestSupport", dependencies: ["PostgresKit"], path: "Tests/TestSupport"),
        // Journals on both backends, and a journal test's fixed clock and runs. Not shipped.
        .target(name: "JournalTestSupport", dependencies: ["RunJournal", "PostgresKit", "TestSupport"], path: "Tests/JournalTestSupport"),
        .testTarget(name: "JSONKitTests", dependencies: ["JSONKit"]),
        .testTarget(name: "SystemTextTests", dependencies: ["SystemText"]),
        .testTarget(name: "ScriptHostTests", dependencies: ["ScriptHost"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit"]),
        .testTarget(name: "SchedulerTests", dependencies: ["Scheduler"]),
        .testTarget(name: "DispatchClientTests", dependencies: ["DispatchClient", "HubSandbox", "HTTPKit"]),
        .testTarget(name: "HubSandboxTests", dependencies: ["HubSandbox", "HTTPKit", "JSONKit", "CSodium"]),
        .testTarget(name: "HubClientTests", dependencies: ["HubClient", "HubSandbox", "HTTPKit"]),
        .testTarget(name: "RunJournalTests", dependencies: ["JournalTestSupport", "RunJournal", "HubClient", "SQLiteKit", "PostgresKit", "SystemText", "TestSupport"]),
        .testTarget(name: "RecipeModulesTests", dependencies: ["JournalTestSupport", "TestSupport", "RecipeModules", "Runs", "Secrets", "Configuration", "RunJournal", "HubClient", "HubSandbox", "ScriptHost", "HTTPKit", "DispatchClient", "Vault", "SystemText"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration", "RecipeModules", "Secrets", "RunJournal", "HubClient", "ScriptHost", "Scheduler", "SystemText", "Vault"]),
        .testTarget(name: "AutomationTests", dependencies: ["JournalTestSupport", "Automation", "Runs", "Configuration", "RecipeModules", "Secrets", "RunJournal", "HubClient", "HubSandbox", "ScriptHost", "HTTPKit", "Scheduler", "SystemText", "TestSupport"]),
        .testTarget(name: "PostgresKitTests", dependencies: ["PostgresKit"]),
        .testTarget(name: "hubscriptTests", dependencies: ["HubSandbox", "Vault", "PostgresKit"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "CSodium"]),
    ]
)

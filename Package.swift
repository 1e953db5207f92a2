// swift-tools-version:6.0
// hubscript — a sandboxed Lua 5.4 host for Substratal Hub recipes.
// Layout and module boundaries: docs/architecture.md; the dependency rule that
// scripts/module-graph checks: scripts/lib/module-layers.txt.
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

        // The scanning core of SystemText's secret masking (a rolling hash per length).
        .target(name: "CSecretScan"),
        // Plain words for file-system errors, start-up-cheap system helpers and secret
        // masking, shared by the runtime and the client (Foundation only).
        .target(name: "SystemText", dependencies: ["CSecretScan"]),
        // The one JSON parser (JSONReader, into any JSONBuilder) and writer (JSONWriter,
        // canonical objects with sorted keys). Foundation only.
        .target(name: "JSONKit", dependencies: ["SystemText"]),
        // A Lua 5.4 lexer, parser and scope resolver in Swift (positions, locals, globals), for
        // `hubscript check`'s static analysis. No Lua runtime.
        .target(name: "LuaSyntax"),
        // The static analysis of recipes over LuaSyntax: undeclared globals, unknown module
        // fields, undeclared permissions, parameters and argument counts.
        .target(name: "RecipeCheck", dependencies: ["LuaSyntax", "ScriptHost"]),
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
        .target(name: "HTTPKit", dependencies: ["CSodium", "SystemText"]),
        // Cron schedules, time zones, fire planning and job definitions. No Lua.
        .target(name: "Scheduler", dependencies: ["SystemText", "JSONKit"]),
        // The Dispatch client (docs/dispatch.md). No Lua.
        .target(name: "DispatchClient", dependencies: ["HTTPKit", "JSONKit", "SystemText"]),
        // What a long-running command tells its operators: a metrics registry, the Prometheus
        // text format, and the /healthz, /readyz and /metrics handlers. No Lua, no journal.
        .target(name: "Telemetry", dependencies: ["HTTPKit"]),
        // The emulated Hub and Dispatch services. Only the CLI and tests depend on it.
        .target(name: "HubSandbox", dependencies: ["SQLiteKit", "HTTPKit", "JSONKit", "SystemText"]),
        // The Hub client (transports, auth, retries, pagination), profiles, configuration
        // types, the state directory, credentials and HubConnection. No Lua.
        .target(name: "HubClient", dependencies: ["HTTPKit", "JSONKit", "SystemText", "CCurlEasy"]),
        // One HTTPS exchange through libcurl (loaded on first use) with a CA bundle of the
        // profile's or SSL_CERT_FILE's choosing: URLSession on Linux cannot take one per session.
        .target(name: "CCurlEasy", path: "Sources/CCurlEasy", linkerSettings: [.linkedLibrary("dl")]),
        // SHA-256 with the x86 SHA extensions (the vault's object ids; libsodium's is slower).
        .systemLibrary(name: "CVault", path: "Sources/CVault"),
        // The one SHA-256 (CVault's where the CPU has the SHA extensions, else libsodium's).
        .target(name: "SHA256Kit", dependencies: ["CSodium", "CVault"]),
        // The encrypted vault (libsodium). No Lua.
        .target(name: "Vault", dependencies: ["CSodium", "CVault", "SHA256Kit", "SystemText"]),
        // The journal: runs, writes, recorded reads, fires, trigger events and state, on SQLite
        // or PostgreSQL, and the run locks kept beside it. No Lua: it stores JSON text.
        .target(name: "RunJournal", dependencies: ["HubClient", "SQLiteKit", "PostgresKit", "SystemText", "SHA256Kit", "Telemetry"]),
        // Where a run's secrets come from (the vault, the environment) and the handles a recipe holds.
        .target(name: "Secrets", dependencies: ["ScriptHost", "HubClient", "Vault", "SystemText"]),
        // What a recipe calls: the hub, dispatch, state, vault, export, csv and progress modules,
        // the gate, and the write path (idempotency keys, the write coordinator, plans).
        .target(name: "RecipeModules", dependencies: ["ScriptHost", "JSONKit", "HubClient", "RunJournal", "Secrets", "SystemText", "DispatchClient", "Vault", "HTTPKit"]),
        // The configuration file: its evaluation, profiles, Dispatch targets, libraries (git and
        // pins), jobs, triggers and the journal's location, and its trust.
        .target(name: "Configuration", dependencies: ["ScriptHost", "HubClient", "SystemText", "RunJournal", "RecipeModules", "Scheduler", "DispatchClient", "Secrets", "PostgresKit"]),
        // One recipe run against a Hub from start to outcome: passes, resume, plan and apply.
        .target(name: "Runs", dependencies: ["ScriptHost", "HubClient", "SystemText", "RunJournal", "Secrets", "RecipeModules", "Configuration"]),
        // What starts runs unattended: the job scheduler and its fire pool, the webhook trigger listener.
        .target(name: "Automation", dependencies: ["SystemText", "ScriptHost", "HubClient", "HTTPKit", "RunJournal", "Secrets", "Configuration", "Runs", "Scheduler", "Telemetry"]),
        // The operator console: the journal's runs, jobs, triggers and plans as web pages, and
        // the actions a signed-in Hub user may take (docs/console.md). No Lua of its own.
        .target(name: "Console", dependencies: ["RunJournal", "Configuration", "HubClient", "HTTPKit", "Scheduler", "SystemText"]),
        // libcurl and libpq loaded on first use, not at start-up (lazy_load.h): what
        // FoundationNetworking and PostgresKit call, for the statically linked release build.
        .target(name: "CLazyLibraries", path: "Sources/CLazyLibraries", linkerSettings: [.linkedLibrary("dl")]),
        // Shell completion: which candidates a command line's last word gets (no dependencies).
        .target(name: "ShellCompletion"),
        // The thin CLI; it composes the embedded sandbox with the client (EmbeddedSandbox).
        .executableTarget(name: "hubscript", dependencies: ["ShellCompletion", "ScriptHost", "LuaSyntax", "RecipeCheck", "RunJournal", "Secrets", "RecipeModules", "Configuration", "Runs", "Automation", "Console", "HubClient", "HubSandbox", "HTTPKit", "DispatchClient", "Vault", "Scheduler", "CLazyLibraries", "SystemText", "Telemetry"]),
        // The client side of scripts/bench-client, and the runtime's `bench` module for
        // scripts/bench-runtime (not installed, not for users).
        .executableTarget(name: "hubscript-bench", dependencies: ["HubClient", "DispatchClient", "HTTPKit", "ScriptHost"], path: "Sources/hubscript-bench"),
        // Prints Sources/CLuaChunks/prelude_bytecode.c for scripts/generate-prelude-bytecode (not installed).
        .executableTarget(name: "prelude-bytecode", dependencies: ["ScriptHost"], path: "Sources/prelude-bytecode"),

        // What several test targets share (the PostgreSQL test server). Not shipped.
        .target(name: "TestSupport", dependencies: ["PostgresKit"], path: "Tests/TestSupport"),
        // Journals on both backends, and a journal test's fixed clock and runs. Not shipped.
        .target(name: "JournalTestSupport", dependencies: ["RunJournal", "PostgresKit", "TestSupport"], path: "Tests/JournalTestSupport"),
        .testTarget(name: "JSONKitTests", dependencies: ["JSONKit"]),
        .testTarget(name: "LuaSyntaxTests", dependencies: ["LuaSyntax", "RecipeCheck", "ScriptHost"]),
        .testTarget(name: "SystemTextTests", dependencies: ["SystemText"]),
        .testTarget(name: "ScriptHostTests", dependencies: ["ScriptHost", "SystemText"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit"]),
        .testTarget(name: "SchedulerTests", dependencies: ["Scheduler"]),
        .testTarget(name: "DispatchClientTests", dependencies: ["DispatchClient", "HubSandbox", "HTTPKit"]),
        .testTarget(name: "HubSandboxTests", dependencies: ["HubSandbox", "HTTPKit", "JSONKit", "CSodium", "SQLiteKit"]),
        .testTarget(name: "HubClientTests", dependencies: ["HubClient", "HubSandbox", "HTTPKit"]),
        .testTarget(name: "RunJournalTests", dependencies: ["JournalTestSupport", "RunJournal", "HubClient", "SQLiteKit", "PostgresKit", "SystemText", "TestSupport", "Telemetry"]),
        .testTarget(name: "RecipeModulesTests", dependencies: ["JSONKit", "SQLiteKit", "JournalTestSupport", "TestSupport", "RecipeModules", "Runs", "Secrets", "Configuration", "RunJournal", "HubClient", "HubSandbox", "ScriptHost", "HTTPKit", "DispatchClient", "Vault", "SystemText"]),
        .testTarget(name: "ConfigurationTests", dependencies: ["Configuration", "RecipeModules", "Secrets", "RunJournal", "HubClient", "ScriptHost", "Scheduler", "SystemText", "Vault"]),
        .testTarget(name: "AutomationTests", dependencies: ["JournalTestSupport", "Automation", "Runs", "Configuration", "RecipeModules", "Secrets", "RunJournal", "HubClient", "HubSandbox", "ScriptHost", "HTTPKit", "Scheduler", "SystemText", "TestSupport", "Telemetry"]),
        .testTarget(name: "PostgresKitTests", dependencies: ["PostgresKit", "TestSupport"]),
        .testTarget(name: "hubscriptTests", dependencies: ["HubSandbox", "Vault", "PostgresKit", "HTTPKit", "TestSupport"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "CSodium"]),
        .testTarget(name: "ShellCompletionTests", dependencies: ["ShellCompletion"]),
        .testTarget(name: "SHA256KitTests", dependencies: ["SHA256Kit", "SystemText"]),
        .testTarget(name: "TelemetryTests", dependencies: ["Telemetry", "HTTPKit"]),
        .testTarget(name: "ConsoleTests", dependencies: ["Console", "SystemText", "JournalTestSupport", "TestSupport", "RunJournal", "Configuration", "HubClient", "HubSandbox", "HTTPKit", "Scheduler"]),
    ]
)

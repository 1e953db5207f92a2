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
            name: "CSodium", path: "Sources/CSodium", pkgConfig: "libsodium",
            providers: [.apt(["libsodium-dev"])]),

        // Plain words for file-system errors, shared by the runtime and the client (Foundation only).
        .target(name: "SystemText"),
        // The one JSON parser (JSONReader, into any JSONBuilder) and writer (JSONWriter,
        // canonical objects with sorted keys). Foundation only.
        .target(name: "JSONKit"),
        // Generic Lua runtime: knows nothing about the Hub.
        .target(name: "ScriptHost", dependencies: ["CLua", "JSONKit", "SystemText"]),
        // The one SQLite wrapper (journal and sandbox store).
        .target(name: "SQLiteKit", dependencies: ["CSQLite"]),
        // HTTP/1.1 message types and the small loopback server.
        .target(name: "HTTPKit"),
        // The emulated Hub and Dispatch services. Only the CLI and tests depend on it.
        .target(name: "HubSandbox", dependencies: ["SQLiteKit", "HTTPKit", "JSONKit"]),
        // The Hub client (transports, auth, retries, pagination), profiles, configuration
        // types, the state directory, credentials and HubConnection. No Lua.
        .target(name: "HubClient", dependencies: ["HTTPKit", "JSONKit", "SystemText"]),
        // The recipe side of the Hub: the hub, export, csv and progress plugins, the config
        // file's evaluation, the journal, writes, plans and runs.
        .target(name: "HubBindings", dependencies: ["HubClient", "ScriptHost", "SQLiteKit", "SystemText", "CSodium"]),
        // The thin CLI; it composes the embedded sandbox with the client (EmbeddedSandbox).
        .executableTarget(name: "hubscript", dependencies: ["ScriptHost", "HubBindings", "HubClient", "HubSandbox", "HTTPKit"]),
        // The client side of scripts/bench-client (not installed, not for users).
        .executableTarget(name: "hubscript-bench", dependencies: ["HubClient"], path: "Sources/hubscript-bench"),

        .testTarget(name: "JSONKitTests", dependencies: ["JSONKit"]),
        .testTarget(name: "ScriptHostTests", dependencies: ["ScriptHost"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit"]),
        .testTarget(name: "HubSandboxTests", dependencies: ["HubSandbox", "HTTPKit", "JSONKit"]),
        .testTarget(name: "HubClientTests", dependencies: ["HubClient", "HubSandbox", "HTTPKit"]),
        .testTarget(name: "HubBindingsTests", dependencies: ["HubBindings", "HubClient", "HubSandbox", "ScriptHost", "HTTPKit"]),
        .testTarget(name: "hubscriptTests", dependencies: ["HubSandbox"]),
    ]
)

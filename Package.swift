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

        // Generic Lua runtime: knows nothing about the Hub.
        .target(name: "ScriptHost", dependencies: ["CLua"]),
        // The one SQLite wrapper (journal and sandbox store).
        .target(name: "SQLiteKit", dependencies: ["CSQLite"]),
        // HTTP/1.1 message types and the small loopback server.
        .target(name: "HTTPKit"),
        // The emulated Hub and Dispatch services.
        .target(name: "HubSandbox", dependencies: ["SQLiteKit", "HTTPKit"]),
        // Hub client, gating, journal, plugins.
        .target(name: "HubBindings", dependencies: ["ScriptHost", "HTTPKit", "HubSandbox", "SQLiteKit", "CSodium"]),
        // SHA-256 with the x86 SHA extensions (the vault's object ids; libsodium's is slower).
        .systemLibrary(name: "CVault", path: "Sources/CVault"),
        // The encrypted vault (libsodium). No Lua.
        .target(name: "Vault", dependencies: ["CSodium", "CVault"]),
        // The thin CLI.
        .executableTarget(name: "hubscript", dependencies: ["ScriptHost", "HubBindings", "HubSandbox", "HTTPKit", "Vault"]),
        // The client side of scripts/bench-client (not installed, not for users).
        .executableTarget(name: "hubscript-bench", dependencies: ["HubBindings"], path: "Sources/hubscript-bench"),

        .testTarget(name: "ScriptHostTests", dependencies: ["ScriptHost"], resources: [.copy("Fixtures")]),
        .testTarget(name: "HTTPKitTests", dependencies: ["HTTPKit"]),
        .testTarget(name: "HubSandboxTests", dependencies: ["HubSandbox", "HTTPKit"]),
        .testTarget(name: "HubBindingsTests", dependencies: ["HubBindings", "HubSandbox", "ScriptHost", "HTTPKit"]),
        .testTarget(name: "hubscriptTests", dependencies: ["HubSandbox", "Vault"]),
        .testTarget(name: "VaultTests", dependencies: ["Vault", "CSodium"]),
    ]
)

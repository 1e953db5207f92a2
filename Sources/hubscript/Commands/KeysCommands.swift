import Foundation
import SystemText
import HubClient
import ScriptHost

/// `hubscript keys show|list`: API keys' records read with a user session, so a profile
/// that uses a key can declare what the key holds (an API key cannot read key records
/// on the Hub, and hubscript never assumes a key's permissions).
enum KeysCommands {
    static let group = CommandGroup(
        name: "keys", abstract: "Show API keys' permissions as a ready line of profile config.",
        subcommands: [HubscriptCLI.entry(KeysShowCommand.self), HubscriptCLI.entry(KeysListCommand.self)])

    /// Reports a Hub error of `keys show|list` on stderr, with what to do; returns the
    /// exit code: 3 when the profile may not read key records, 2 when it is an API key
    /// profile (the wrong kind), 1 otherwise.
    static func report(_ error: HubError, command: String, profile: String, keyID: String?) -> Int32 {
        let prefix = "hubscript \(command): "
        switch error.code {
        case HubError.Code.userTokenRequired:
            Console.err(prefix + "profile '\(profile)' signs in with an API key, and the Hub shows API key records only to a user session. "
                        + "Use a profile with email = \"…\" (sign in with hubscript login --profile NAME) and pass --profile NAME.\n")
            return ExitCode.usage
        case HubError.Code.forbidden:
            Console.err(prefix + "profile '\(profile)' may not read API key records (the Hub answered 403: it needs api_keys.manage). "
                        + "Use the profile of an administrator who holds it.\n")
            return ExitCode.capabilityDenied
        case _ where error.status == 404 && keyID != nil:
            Console.err(prefix + "no API key '\(keyID!)' on the Hub of profile '\(profile)'; "
                        + "hubscript keys list --profile \(profile) lists the keys it can see.\n")
            return ExitCode.recipeFailed
        default:
            Console.err(prefix + TerminalText.text("\(error)") + "\n")
            return ExitCode.recipeFailed
        }
    }

    /// The permissions of a key's record that this hubscript knows (sorted), and the
    /// others (left out: a profile may declare only catalogue permissions).
    static func permissions(of record: HubJSON) -> (known: [String], unknown: [String]) {
        let all = Set((record["permissions"]?.arrayValue ?? []).compactMap(\.stringValue))
        let known = Set(Capabilities.allPermissions)
        return (all.filter(known.contains).sorted(), all.subtracting(known).sorted())
    }

    /// `api_key_permissions = { "a", "b" },  -- key_x (Name), read 2026-12-02`: valid Lua
    /// whatever the record holds (the name is escaped, so it cannot end the comment).
    static func configLine(id: String, name: String, permissions: [String], readAt: Date) -> String {
        let list = permissions.isEmpty ? "{}" : "{ " + permissions.map { "\"\($0)\"" }.joined(separator: ", ") + " }"
        let day = UTCFields(secondsSince1970: Int64(readAt.timeIntervalSince1970)).description.prefix(10)
        return "api_key_permissions = \(list),  -- \(TerminalText.field(id)) (\(TerminalText.field(name))), read \(day)"
    }
}

/// `hubscript keys show KEY_ID --profile SESSION_PROFILE`.
struct KeysShowCommand: Command {
    static let configuration = CommandConfiguration(
        name: "keys show", abstract: "Print an API key's permissions as a ready line of profile config.",
        usage: "KEY_ID --profile SESSION_PROFILE [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "Print the key's id, name, status, permissions and the line as one JSON object.")]
            + CommonOptions.specs,
        discussion: """
        Reads the key's record (GET /api-keys/KEY_ID) with the profile's credential: a user
        session holding api_keys.manage (the Hub shows key records only to users), and prints
        one line to paste into the profile that uses the key:

          api_key_permissions = { "audit.view", "users.list" },  -- key_support_ro (Support read-only), read 2026-12-02

        A recipe that writes runs with an API key only when the key's permissions are known
        (this line, or api_key_id with api_key_record_profile), or with gate = "hub". Print
        the line again when the key's permissions change.
        """)

    let common: CommonOptions.Values
    let keyID: String
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one API key id (key_…)") }
        keyID = arguments.positionals[0]
        guard keyID.hasPrefix("key_"), keyID.count <= 100,
              keyID.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "_-".unicodeScalars.contains($0)) }) else {
            throw UsageError("'\(TerminalText.field(keyID))' is not an API key id (key_ followed by letters, digits, _ or -)")
        }
        common = try CommonOptions.Values(arguments)
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        let connection = try common.connect()
        let record: HubJSON
        do {
            record = try connection.client.get("/api-keys/\(keyID)").json
        } catch let error as HubError {
            return KeysCommands.report(error, command: "keys show", profile: connection.profileName, keyID: keyID)
        }
        let name = record["name"]?.stringValue ?? ""
        let status = record["status"]?.stringValue ?? "active"
        if status != "active" {
            let since = record["revoked_at"]?.stringValue.map { " since \($0)" } ?? ""
            Console.err("hubscript keys show: API key \(keyID) (\(TerminalText.field(name))) is \(TerminalText.field(status))\(TerminalText.field(since)): "
                        + "it can do nothing, so there is nothing to declare. Give the profile a live key.\n")
            return ExitCode.recipeFailed
        }
        let (known, unknown) = KeysCommands.permissions(of: record)
        let line = KeysCommands.configLine(id: keyID, name: name, permissions: known, readAt: Date())
        if json {
            let object: ScriptValue = .object([
                "id": .string(keyID), "name": .string(name), "status": .string(status),
                "permissions": .array(known.map(ScriptValue.string)), "unknown_permissions": .array(unknown.map(ScriptValue.string)),
                "line": .string(line),
            ])
            Console.out((try JSONCodec.encode(object)) + "\n")
        } else {
            Console.out(line + "\n")
        }
        if !unknown.isEmpty {
            Console.err("hubscript keys show: left out \(unknown.map(TerminalText.field).joined(separator: ", ")), which this hubscript "
                        + "does not know (no recipe can declare \(unknown.count == 1 ? "it" : "them") in needs); a newer hubscript may.\n")
        }
        return ExitCode.success
    }
}

/// `hubscript keys list --profile SESSION_PROFILE`.
struct KeysListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "keys list", abstract: "List the API keys a user session can see, with their permissions.",
        usage: "--profile SESSION_PROFILE [--all]",
        options: [OptionSpec(name: "all", valueName: nil, help: "Include revoked and expired keys.")] + CommonOptions.specs,
        discussion: "hubscript keys show KEY_ID prints one key's permissions as a line of profile config.")

    let common: CommonOptions.Values
    let all: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("keys list takes no arguments (did you mean hubscript keys show \(arguments.positionals[0])?)") }
        common = try CommonOptions.Values(arguments)
        all = arguments.flag("all")
    }

    func run() throws -> Int32 {
        let connection = try common.connect()
        let keys: [HubJSON]
        do {
            keys = try connection.client.paginate(path: "/api-keys", query: all ? [(name: "include_inactive", value: "true")] : [])
                .allItems()
        } catch let error as HubError {
            return KeysCommands.report(error, command: "keys list", profile: connection.profileName, keyID: nil)
        }
        let rows = keys.map { key -> [String] in
            [key["id"]?.stringValue ?? "", key["name"]?.stringValue ?? "", key["status"]?.stringValue ?? "",
             KeysCommands.permissions(of: key).known.joined(separator: " ")].map(TerminalText.field)
        }
        let header = ["ID", "NAME", "STATUS", "PERMISSIONS"]
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, cell in i == cells.count - 1 ? cell : cell.padding(toLength: widths[i], withPad: " ", startingAt: 0) }
                .joined(separator: "  ") + "\n"
        }
        Console.out(([header] + rows).map(line).joined())
        return ExitCode.success
    }
}

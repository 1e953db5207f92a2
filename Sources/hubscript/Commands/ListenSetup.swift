import Foundation
import HubClient
import ScriptHost
import Vault
import Configuration

/// `hubscript listen --setup`: registers the webhook the configuration's triggers need
/// at each trigger's Hub and puts its signing secret straight into the vault entry the
/// trigger names — the secret is never printed, journalled or handed to a recipe.
///
/// Contracts:
/// - Triggers are grouped by (profile, vault entry): one webhook per group, subscribed
///   to the group's event types (`*` when a trigger uses a prefix or `*`), delivering to
///   `url` (default `http://127.0.0.1:PORT/hooks`).
/// - Idempotent and repairable: a webhook already delivering to `url` is kept (its event
///   list updated if it differs); if the vault lacks its secret (a crash between the
///   Hub's answer and the vault write, or a new vault), the secret is rotated and stored.
///   Running it twice changes nothing the second time.
struct ListenSetup {
    let url: String
    let common: CommonOptions.Values
    let vaultLocation: VaultCommands.Location

    /// One webhook to set up.
    struct Group {
        let profile: String?
        let secret: String
        var triggers: [String]
        var patterns: [String]

        /// The subscription's event types: exact types, or `*` if any pattern is wider.
        var events: [String] {
            if patterns.contains(where: { $0.hasSuffix("*") }) { return ["*"] }
            return Array(Set(patterns)).sorted()
        }
    }

    static func groups(_ triggers: TriggersConfig) -> [Group] {
        var groups: [Group] = []
        for trigger in triggers.triggers {
            if let index = groups.firstIndex(where: { $0.profile == trigger.profile && $0.secret == trigger.secret }) {
                groups[index].triggers.append(trigger.name)
                groups[index].patterns += trigger.on
            } else {
                groups.append(Group(profile: trigger.profile, secret: trigger.secret, triggers: [trigger.name], patterns: trigger.on))
            }
        }
        return groups
    }

    func run(triggers: TriggersConfig) throws -> Int32 {
        let groups = Self.groups(triggers)
        // One URL at one Hub is one webhook with one signing secret: triggers of the same
        // profile must name the same vault entry.
        for (index, group) in groups.enumerated() {
            if let other = groups[..<index].first(where: { ($0.profile ?? common.profile) == (group.profile ?? common.profile) }) {
                throw HubConfigError("triggers \(other.triggers.joined(separator: ", ")) and \(group.triggers.joined(separator: ", ")) "
                    + "deliver to \(url) at the same Hub but name different vault entries (\(other.secret), \(group.secret)); "
                    + "one webhook has one signing secret: give them the same secret entry")
            }
        }
        let vault = try vaultLocation.open()
        for group in groups {
            let profile = group.profile ?? common.profile
            let connection = try VaultAccess.connect(config: common.hub, profile: profile, state: common.state, quiet: true)
            if let notice = connection.notice { Console.err(notice + "\n") }
            Console.out(try setUp(group, client: connection.client, vault: vault) + "\n")
        }
        return ExitCode.success
    }

    /// Sets up one group's webhook; returns the line that says what was done.
    private func setUp(_ group: Group, client: HubClient, vault: Vault) throws -> String {
        let events = group.events
        let names = group.triggers.joined(separator: ", ")
        let existing = try client.paginate(path: "/webhooks").allItems().first { $0["url"]?.stringValue == url }
        let hasSecret = (try? vault.secret(named: group.secret)) != nil
        guard let existing, let id = existing["id"]?.stringValue else {
            let body: HubJSON = .object(["url": .string(url), "events": .array(events.map { .string($0) }),
                                         "description": .string("hubscript listen (triggers: \(names))")])
            let created = try client.post("/webhooks", body: body, idempotencyKey: "listen-setup-" + UUID().uuidString)
            guard let newID = created.json["id"]?.stringValue else { throw HubConfigError("the Hub's answer to POST /webhooks has no id") }
            try store(created.json, in: group.secret, vault: vault)
            return "created webhook \(newID) for \(names): \(events.joined(separator: ", ")) → \(url); its signing secret is in the vault as \(group.secret)"
        }
        var done: [String] = []
        let current = (existing["events"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
        if current != events {
            _ = try client.patch("/webhooks/\(id)", body: .object(["events": .array(events.map { .string($0) })]),
                                 idempotencyKey: "listen-setup-" + UUID().uuidString)
            done.append("events now \(events.joined(separator: ", "))")
        }
        if !hasSecret {
            let rotated = try client.post("/webhooks/\(id)/rotate-secret", body: [:], idempotencyKey: "listen-setup-" + UUID().uuidString)
            try store(rotated.json, in: group.secret, vault: vault)
            done.append("secret rotated into the vault as \(group.secret)")
        }
        if done.isEmpty {
            return "webhook \(id) for \(names) already delivers \(events.joined(separator: ", ")) to \(url); its secret is in the vault as \(group.secret): nothing to do"
        }
        return "webhook \(id) for \(names) → \(url): " + done.joined(separator: "; ")
    }

    private func store(_ answer: HubJSON, in name: String, vault: Vault) throws {
        guard let secret = answer["signing_secret"]?.stringValue, !secret.isEmpty else {
            throw HubConfigError("the Hub's answer has no signing_secret; set the secret by hand: hubscript vault set \(name)")
        }
        _ = try vault.setSecret(name, value: SecretBytes(copying: Array(secret.utf8)))
    }
}

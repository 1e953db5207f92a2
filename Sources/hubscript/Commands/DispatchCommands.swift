import SystemText
import DispatchClient
import Foundation
import HubClient
import ScriptHost

enum DispatchCommands {
    static let group = CommandGroup(
        name: "dispatch", abstract: "Check the profile's Dispatch (phone notifications).",
        subcommands: [HubscriptCLI.entry(DispatchTestCommand.self)])
}

/// `hubscript dispatch test`: one notification through the profile's Dispatch, so a
/// profile's `dispatch_url` and token can be checked before a recipe relies on them.
struct DispatchTestCommand: Command {
    static let configuration = CommandConfiguration(
        name: "dispatch test",
        abstract: "Send one test notification through the profile's Dispatch.",
        usage: "[--profile P] [--target NAME] [--title T] [--body B]",
        options: [
            OptionSpec(name: "target", valueName: "name", help: "A Dispatch target of the configuration (dispatch_targets) instead of the profile's Dispatch."),
            OptionSpec(name: "title", valueName: "text", help: "The title, 1–100 characters (default: hubscript test)."),
            OptionSpec(name: "body", valueName: "text", help: "The body, 1–1000 characters (default: names the profile)."),
        ] + CommonOptions.specs,
        discussion: """
        Prints the notification's id and how many devices Dispatch handed it to. Exits 0 when
        Dispatch accepted it, 1 when Dispatch failed or could not be reached, 2 for a usage or
        configuration problem (no Dispatch in the profile, no vault, a refused token, a title
        or body out of range). docs/dispatch.md.
        """)

    let common: CommonOptions.Values
    let title: String
    let body: String?
    let targetName: String?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument '\(arguments.positionals[0])'")
        }
        common = try CommonOptions.Values(arguments)
        title = arguments.value("title") ?? "hubscript test"
        body = arguments.value("body")
        targetName = arguments.value("target")
    }

    func run() throws -> Int32 {
        var (target, unconfigured) = try common.dispatchTarget()
        if let targetName {
            // A configured target, as a recipe's dispatch.connect(NAME) would reach it.
            target = try common.dispatchTargets([targetName], common.hub, profile: common.profile)[targetName]!
        }
        let notification: DispatchNotification
        do {
            notification = try DispatchNotification(title: title, body: body ?? "A test notification from hubscript (profile \(target.profile)).")
        } catch let error as DispatchError {
            throw UsageError("--" + error.message)
        }
        if unconfigured, case .sandbox = target.endpoint {
            Console.err("hubscript: no configuration found; using the built-in sandbox Dispatch (\(try common.state.sandboxFile.path)). See docs/dispatch.md.\n")
        }
        do {
            // A profile's dispatch_token_ref is read from the vault (key from the environment).
            let client = try target.client(secrets: VaultAccess.resolver(state: common.state), masking: .shared)
            let receipt = try client.send(notification, idempotencyKey: "hst-test-" + UUID().uuidString.lowercased())
            Console.out("""
                Sent "\(TerminalText.field(notification.title))" through \(target.displayName)\(target.name.map { " (target '\(TerminalText.field($0))', " } ?? " (")profile '\(target.profile)').
                id: \(TerminalText.field(receipt.id))
                accepted devices: \(receipt.acceptedDevices)

                """)
            return ExitCode.success
        } catch let error as DispatchError {
            Console.err("hubscript dispatch test: \(TerminalText.text(SecretRedactor.shared.redact(error.description)))\n")
            return Self.configurationCodes.contains(error.code) ? ExitCode.usage : ExitCode.recipeFailed
        } catch let error as ScriptStructuredError {
            Console.err("hubscript dispatch test: \(TerminalText.text(SecretRedactor.shared.redact(error.description)))\n")
            return ExitCode.usage
        }
    }

    /// Codes that mean the profile (or the token it names) is wrong, not Dispatch: exit 2.
    static let configurationCodes: Set<String> = [
        DispatchError.Code.unauthorized, DispatchError.Code.insecureTransport, DispatchError.Code.configuration,
        DispatchError.Code.redirectRefused, DispatchError.Code.notFound,
    ]
}

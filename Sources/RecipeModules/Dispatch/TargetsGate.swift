import SystemText
import DispatchClient
import ScriptHost
import Secrets

/// The manifest's `targets = {…}`, checked before the recipe runs, as its `needs` and
/// `secrets` are: each declared target must be one the configuration defines for the
/// run's profile, and its token must be readable. Reading the tokens here also loads
/// them into `SecretRedactor` before anything is journalled or shown.
package enum TargetsGate {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// - Throws: `Unavailable` naming the first target that is not defined, whose token
    ///   cannot be read, or whose token is the run's Hub credential (`isHubCredential`,
    ///   whatever name reached it), and what to do (a configuration problem: exit code 2).
    package static func check(_ names: [String], targets: [String: DispatchTarget], secrets: (any SecretResolver)?,
                      masking: SecretRedactor, profile: String, isHubCredential: (String) -> Bool) throws {
        for name in names {
            guard let target = targets[name] else {
                throw Unavailable(description: "the recipe sends to the Dispatch target '\(name)' (targets = { \"\(name)\" }), which this run does not offer: define it in the configuration's dispatch_targets = { \(name) = { url = \"https://…\", token_ref = \"dispatch/\(name)\" } }")
            }
            let client: DispatchClient
            do { client = try target.client(secrets: secrets, masking: masking) } catch {
                let structured = (error as? ScriptStructuredError) ?? (error as? ScriptStructuredErrorConvertible)?.scriptError
                let why = structured.map { "\($0.code): \($0.message)" } ?? "\(error)"
                throw Unavailable(description: "the recipe sends to the Dispatch target '\(name)', which cannot be used: \(why)")
            }
            if client.token(satisfies: isHubCredential) {
                throw Unavailable(description: "the recipe sends to the Dispatch target '\(name)', which cannot be used: its token (\(client.tokenSource)) is the Hub credential of profile '\(profile)' under another name: a recipe can make Dispatch carry its token, so it may never be a session or an API key. Keep Dispatch's machine token in its own vault entry (hubscript vault set dispatch/NAME) and name that")
            }
        }
    }

    /// The profile's own Dispatch (`dispatch_token_ref`), when the recipe may send
    /// (`needs` holds `dispatch.send`) and its token can be read now: never the run's Hub
    /// credential under another name. A token that cannot be read yet fails at the first
    /// send, as before.
    package static func checkProfileDispatch(_ dispatch: DispatchTarget?, needs: [String], secrets: (any SecretResolver)?,
                                     masking: SecretRedactor, profile: String, isHubCredential: (String) -> Bool) throws {
        guard needs.contains("dispatch.send"), let dispatch, case .server = dispatch.endpoint,
              let client = try? dispatch.client(secrets: secrets, masking: masking), client.token(satisfies: isHubCredential) else { return }
        throw Unavailable(description: "the recipe may send through profile '\(profile)''s Dispatch, whose token (\(client.tokenSource), dispatch_token_ref) is the Hub credential of profile '\(profile)' under another name: a recipe can make Dispatch carry its token, so it may never be a session or an API key. Keep Dispatch's machine token in its own vault entry (hubscript vault set dispatch/NAME) and name that")
    }
}

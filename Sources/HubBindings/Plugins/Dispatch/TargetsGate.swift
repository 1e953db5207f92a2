import ScriptHost

/// The manifest's `targets = {…}`, checked before the recipe runs, as its `needs` and
/// `secrets` are: each declared target must be one the configuration defines for the
/// run's profile, and its token must be readable. Reading the tokens here also loads
/// them into `SecretRedactor` before anything is journalled or shown.
enum TargetsGate {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    /// - Throws: `Unavailable` naming the first target that is not defined, or whose
    ///   token cannot be read, and what to do (a configuration problem: exit code 2).
    static func check(_ names: [String], targets: [String: DispatchTarget], secrets: (any SecretResolver)?) throws {
        for name in names {
            guard let target = targets[name] else {
                throw Unavailable(description: "the recipe sends to the Dispatch target '\(name)' (targets = { \"\(name)\" }), which this run does not offer: define it in the configuration's dispatch_targets = { \(name) = { url = \"https://…\", token_ref = \"dispatch/\(name)\" } }")
            }
            do { _ = try target.client(secrets: secrets) } catch {
                let structured = (error as? ScriptStructuredError) ?? (error as? ScriptStructuredErrorConvertible)?.scriptError
                let why = structured.map { "\($0.code): \($0.message)" } ?? "\(error)"
                throw Unavailable(description: "the recipe sends to the Dispatch target '\(name)', which cannot be used: \(why)")
            }
        }
    }
}

import SystemText
import Foundation
import JSONKit
import ScriptHost
import RunJournal

/// The `state` module: small checkpoint values a recipe keeps between runs, per recipe
/// (its manifest name) and profile, in the journal database.
///
/// `state.set(key, value)` is a write like any other: it goes through the run's
/// `WriteCoordinator` (journalled pending, then applied and recorded done; replayed on
/// resume; recorded, not applied, in plan mode; checked against the plan in apply
/// mode; counted by `limits.writes`; a `write` event under `--json`). Applying it is an
/// upsert, so a resend after a crash sets the same value again: a checkpoint is neither
/// lost nor applied twice. `state.get(key)` reads the committed value: a run sees the
/// checkpoints its own earlier passes set (a resumed forwarder continues where it was).
/// A value holding a loaded secret's text is never stored: `state.set` stops the run
/// (`secretRefusal`), so what `state.get` returns is always exactly what was set.
public enum StatePlugin {
    /// Longest key, and largest value as canonical JSON.
    public static let maxKeyBytes = 128
    public static let maxValueBytes = 64 << 10

    /// The scope of a recipe's checkpoints.
    public static func scope(recipe: String, profile: String) -> String { "\(recipe)@\(profile)" }

    public static func make(context: HubRunContext, journal: Journal, scope: String) -> Plugin {
        Plugin(module: "state", summary: """
            Checkpoints kept between runs, per recipe and profile: `state.get(key)` -> value or nil; \
            `state.set(key, value)` stores any JSON value (up to 64 KiB) as a write (journalled, replayed on resume, \
            planned in plan mode). Keys: 1–128 characters.
            """, functions: [
            ScriptFunction("get", summary: "state.get(key) -> the stored value, or nil") { call in
                let key = try checkedKey(call)
                guard let json = try journal.stateValue(scope: scope, key: key) else { return .value(.nilValue) }
                return .value(try JSONCodec.decode(json))
            },
            ScriptFunction("set", writes: true, summary: "state.set(key, value): stores value (a write)") { call in
                let key = try checkedKey(call)
                let value = try call.value(2)
                if value.isNil { throw call.argumentError(2, "a value is required (use json.null to store null)") }
                let jsonValue: JSONValue
                do { jsonValue = try JSONValue(value) } catch { throw call.argumentError(2, "\(error)") }
                let json = String(decoding: jsonValue.canonicalBytes, as: UTF8.self)
                guard json.utf8.count <= maxValueBytes else {
                    throw call.argumentError(2, "the value is \(json.utf8.count) bytes as JSON, over the \(maxValueBytes >> 10) KiB limit")
                }
                // Checked against what masks the journal (shared by the process's runs).
                if let secret = context.writes.masking.processWide.firstSecret(in: value) {
                    throw ScriptLimitError(secretRefusal(key: key, secret: secret))
                }
                let intent = WriteIntent(method: "PUT", path: "/state/\(percentEncoded(key))",
                                         body: CanonicalJSON(.object(["value": jsonValue])),
                                         summary: "state \(key) = \(ShownText.cut(json, max: 80))",
                                         predicted: .bool(true))
                _ = try context.performWrite(intent) { _ in
                    try journal.setState(scope: scope, key: key, valueJSON: json, runID: context.writes.runID,
                                         masking: context.writes.masking.processWide)
                    return .bool(true)
                }
                return .none
            },
        ])
    }

    /// Why `state.set` stopped the run: the value holds a loaded secret's text.
    ///
    /// A checkpoint is never stored masked: `state.get` would hand the masked text back,
    /// and a recipe comparing it with what it stored would learn that its text was the
    /// secret. Nor is the refusal an error a recipe can catch and try again with another
    /// guess: the run stops (exit code 4), nothing is stored, and the message names the
    /// secret, so the person running it sees what happened.
    static func secretRefusal(key: String, secret: String) -> String {
        "state.set(\"\(ShownText.cut(key, max: 40))\", …): the value holds the text of the secret '\(secret)'; a checkpoint never keeps a secret (read back masked, it would tell the recipe what the secret is), so the run stops here and nothing is stored. Keep secrets out of state values"
    }

    private static func checkedKey(_ call: BindingCall) throws -> String {
        let key = try call.string(1)
        guard (1...maxKeyBytes).contains(key.utf8.count),
              key.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F }) else {
            throw call.argumentError(1, "a key is 1–\(maxKeyBytes) bytes of printable text")
        }
        return key
    }

    private static func percentEncoded(_ key: String) -> String {
        key.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? key
    }
}

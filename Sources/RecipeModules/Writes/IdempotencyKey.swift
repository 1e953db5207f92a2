import Foundation
import RunJournal

/// Derived idempotency keys.
///
/// `key = "hs1-" + the first 40 hex digits of SHA-256(runID 0x00 method 0x00 path 0x00
/// body 0x00 occurrence)`, where `body` is the canonical JSON body (sorted keys, compact;
/// the empty string for a write without a body), `method` is upper-case as sent, and
/// `occurrence` is the decimal count of earlier writes in the same execution of the run
/// with the same method, path and body (0 for the first). The key is 44 characters
/// (the Hub accepts 1–255), depends on nothing else, and so a resumed run, a retry or a
/// second firing of the same scheduled job sends the same key for the same logical change,
/// while two identical writes in one run get different keys. `hs1` names this scheme; a
/// different derivation must use another prefix.
///
/// In a plan, a write that names a created id by its placeholder (`usr_planned_1`) gets
/// the key of that placeholder form; `hubscript apply` sends it with the key of the form
/// it sends, with the real id, as a live run would (see `WriteCoordinator`).
public enum IdempotencyKey {
    public static let prefix = "hs1-"

    public static func derive(runID: String, method: String, path: String, canonicalBody: String,
                              occurrence: Int) -> String {
        var bytes = Data()
        for part in [runID, method, path, canonicalBody] {
            bytes.append(contentsOf: Array(part.utf8))
            bytes.append(0)
        }
        bytes.append(contentsOf: Array(String(occurrence).utf8))
        return prefix + Digest.sha256Hex(bytes).prefix(40)
    }
}

import Foundation
import ScriptHost
import RunJournal

extension Plan {
    /// The SHA-256 of the plan's canonical JSON (`jsonValue()` encoded compact with sorted
    /// keys), as 64 lowercase hex characters: what an approval is bound to. Any change to
    /// the plan's writes, params, recipe, profile or counts changes it; the file's
    /// indentation does not.
    public func contentSHA256() throws -> String {
        Digest.sha256Hex(try JSONCodec.encode(jsonValue()))
    }
}

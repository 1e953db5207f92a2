import Foundation

/// Masks secret values in everything the process writes: the console (stdout and
/// stderr, `--json` included) through `FileDescriptorWriter`, and — through
/// `redact(_:)` — the journal, plans, exports and anything else a binding writes. Each
/// writer is handed the redactor it masks with (see below: the process's or a run's).
///
/// A binding that loads a secret (the vault's) registers its value before anything can
/// show it; from then on every occurrence, including inside a longer string, is
/// replaced by `<secret NAME>`. The value's JSON-escaped forms are masked too, since
/// `--json` lines hold text escaped. Values shorter than `minimumLength` bytes are not
/// masked (they would mask ordinary text): the vault warns when such a value is set.
///
/// Masking takes time that does not depend on the secrets' bytes (`SecretMatcher`: a
/// rolling hash per pattern length, no first-byte search), so how long a line takes to
/// print tells nothing about a secret.
///
/// Masked text never flows back to a recipe: a binding that would hand it text read
/// back from a masked store (a checkpoint, a journalled answer) refuses instead
/// (`firstSecret(in:)`), since the mask would tell the recipe that its text held a secret.
///
/// One per run, one per process. A process may run several recipes (`jobs serve`,
/// `listen`), and some outputs are the process's, shared by its runs: the console
/// (stdout, stderr) and the journal. So:
/// - the process's redactor (`shared`) masks those shared outputs, and the process's
///   own secrets register there (the Hub client's credentials);
/// - each run gets a redactor of its own, made for the run with the process's as its
///   `parent`, and passed to what the run writes; every secret the run loads is
///   registered there and, through `register`, in its parent too. A secret loaded by
///   one run can therefore never appear on the console or in the journal (masked with
///   the process's redactor, `processWide`), whichever run writes there, while what
///   one run alone owns (its plan file, its exports) is masked with that run's secrets.
///   A refusal checks against what masks the store it guards: the journal's (a
///   checkpoint, a journalled answer, a recorded read) the process's, a plan's the run's.
/// Everything below the CLI is handed its redactor as a parameter. `shared` is read only
/// where the process's own outputs and secrets are: its console writers (`ConsoleOutput`'s
/// default, the CLI's messages, the progress line), the resolvers of its vault (which
/// register what they read there, in a run or not), and the default of
/// `HubRunRequest.processRedactor`.
///
/// Thread-safe. Secrets are never removed: a value once loaded stays masked until the
/// redactor (for the process's: the process) ends.
public final class SecretRedactor: @unchecked Sendable {
    /// The process's redactor (see the type's contract).
    public static let shared = SecretRedactor()
    public static let minimumLength = SecretForms.minimumLength

    /// Where every secret registered here is registered too (the process's redactor,
    /// for a run's); nil for the process's own.
    public let parent: SecretRedactor?

    /// The redactor of the outputs every run of the process shares (the console, the
    /// journal): the root of the `parent` chain, which holds every secret any run loaded.
    public var processWide: SecretRedactor { parent?.processWide ?? self }

    private let lock = NSLock()
    private var patterns: [SecretMatcher.Pattern] = []
    /// The secret's name by its mask.
    private var names: [[UInt8]: String] = [:]
    private var matcher = SecretMatcher([])
    /// Read without the lock on the hot path: a fast "nothing to mask" check.
    private nonisolated(unsafe) var active = false

    /// A redactor; a run's has the process's as `parent` (see the type's contract).
    public init(parent: SecretRedactor? = nil) {
        self.parent = parent
    }

    /// Whether any value is registered.
    public var isActive: Bool { active }

    /// Masks `value` (and its JSON-escaped forms) as `<secret name>` from now on, here
    /// and in `parent` (and its parent, up to the process's).
    public func register(_ value: UnsafeRawBufferPointer, name: String) {
        guard value.count >= Self.minimumLength else { return }
        parent?.register(value, name: name)
        let mask = Array("<secret \(name)>".utf8)
        let forms = SecretForms.plain(Array(value), mask: mask)
        lock.withLock {
            let known = Set(patterns.map(\.bytes))
            let added = forms.filter { !known.contains($0.bytes) }
            guard !added.isEmpty else { return }
            patterns += added
            names[mask] = name
            matcher = SecretMatcher(patterns)
            active = true
        }
    }

    private var current: SecretMatcher { lock.withLock { matcher } }

    /// `bytes` with every registered value masked; nil when nothing needed masking
    /// (the caller then uses its own bytes, uncopied).
    public func redacted(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard active, !bytes.isEmpty else { return nil }
        return current.masked(bytes)
    }

    /// `text` with every registered value masked.
    public func redact(_ text: String) -> String {
        guard active else { return text }
        return current.masked(text)
    }

    /// `data` with every registered value masked.
    public func redact(_ data: Data) -> Data {
        guard active else { return data }
        return data.withUnsafeBytes { redacted($0) }.map { Data($0) } ?? data
    }

    /// The name of a registered secret whose text (or JSON-escaped text) `text` holds, or nil.
    public func firstSecret(in text: String) -> String? {
        guard active else { return nil }
        let matcher = current
        var text = text
        guard let found = text.withUTF8({ matcher.firstMatch(UnsafeRawBufferPointer($0)) }) else { return nil }
        return lock.withLock { names[found.mask] }
    }

    /// The name of a registered secret whose text (or JSON-escaped text) `bytes` holds, or nil.
    public func firstSecret(in bytes: UnsafeRawBufferPointer) -> String? {
        guard active, let found = current.firstMatch(bytes) else { return nil }
        return lock.withLock { names[found.mask] }
    }
}

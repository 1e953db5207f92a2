import Foundation

/// Masks secret values in everything the process writes: the console (stdout and
/// stderr, `--json` included) through `FileDescriptorWriter`, and — through
/// `redact(_:)` — the journal, plans, exports and anything else a binding writes.
///
/// A binding that loads a secret (the vault's) registers its value before anything can
/// show it; from then on every occurrence, including inside a longer string, is
/// replaced by `<secret NAME>`. The value's JSON-escaped form is masked too, since
/// `--json` lines hold text escaped. Values shorter than `minimumLength` bytes are not
/// masked (they would mask ordinary text): the vault warns when such a value is set.
///
/// Process-wide (`shared`), since a process runs one recipe and its outputs are
/// process-wide; thread-safe. Secrets are never removed: a value once loaded stays
/// masked until the process exits.
public final class SecretRedactor: @unchecked Sendable {
    public static let shared = SecretRedactor()
    public static let minimumLength = 4

    private let lock = NSLock()
    private var patterns: [(bytes: [UInt8], mask: [UInt8])] = []
    /// Read without the lock on the hot path: a fast "nothing to mask" check.
    private nonisolated(unsafe) var active = false

    public init() {}

    /// Whether any value is registered.
    public var isActive: Bool { active }

    /// Masks `value` (and its JSON-escaped form) as `<secret name>` from now on.
    public func register(_ value: UnsafeRawBufferPointer, name: String) {
        guard value.count >= Self.minimumLength else { return }
        let raw = Array(value)
        let mask = Array("<secret \(name)>".utf8)
        var forms = [raw]
        if let text = String(validating: raw, as: UTF8.self),
           let escaped = try? JSONCodec.encode(.string(text)) {
            let inner = Array(escaped.utf8.dropFirst().dropLast())
            if inner != raw { forms.append(inner) }
        }
        lock.withLock {
            for form in forms where !patterns.contains(where: { $0.bytes == form }) {
                patterns.append((form, mask))
            }
            // Longest first, so a secret that contains another is masked whole.
            patterns.sort { $0.bytes.count > $1.bytes.count }
            active = true
        }
    }

    /// `bytes` with every registered value masked; nil when nothing needed masking
    /// (the caller then uses its own bytes, uncopied).
    public func redacted(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard active, !bytes.isEmpty else { return nil }
        let patterns = lock.withLock { self.patterns }
        var current: [UInt8]?
        for (pattern, mask) in patterns {
            let replaced: [UInt8]? = if let current {
                current.withUnsafeBytes { Self.replace(pattern, with: mask, in: $0) }
            } else {
                Self.replace(pattern, with: mask, in: bytes)
            }
            if let replaced { current = replaced }
        }
        return current
    }

    /// `text` with every registered value masked.
    public func redact(_ text: String) -> String {
        guard active else { return text }
        var text = text
        let replaced = text.withUTF8 { redacted(UnsafeRawBufferPointer($0)) }
        return replaced.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// `value` with every registered value masked in its strings (keys included).
    public func redact(_ value: ScriptValue) -> ScriptValue {
        guard active else { return value }
        switch value {
        case .string(let s): return .string(redact(s))
        case .bytes(let b):
            return b.withUnsafeBytes { redacted($0) }.map { ScriptValue.bytes($0) } ?? value
        case .array(let items): return .array(items.map(redact))
        case .object(let fields):
            return .object(Dictionary(fields.map { (redact($0.key), redact($0.value)) }, uniquingKeysWith: { a, _ in a }))
        default: return value
        }
    }

    /// `data` with every registered value masked.
    public func redact(_ data: Data) -> Data {
        guard active else { return data }
        return data.withUnsafeBytes { redacted($0) }.map { Data($0) } ?? data
    }

    /// The offset of the first `pattern` in `bytes` at or after `start` (memchr for its
    /// first byte, then memcmp).
    private static func find(_ pattern: UnsafeRawBufferPointer, in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        let base = bytes.baseAddress!, first = Int32(pattern[0])
        var at = start
        while bytes.count - at >= pattern.count {
            guard let hit = memchr(base + at, first, bytes.count - at - pattern.count + 1) else { return nil }
            let offset = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(hit, pattern.baseAddress!, pattern.count) == 0 { return offset }
            at = offset + 1
        }
        return nil
    }

    /// Every occurrence of `pattern` in `bytes` replaced by `mask`; nil if none.
    private static func replace(_ pattern: [UInt8], with mask: [UInt8], in bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard bytes.baseAddress != nil, bytes.count >= pattern.count else { return nil }
        var out: [UInt8]?
        var start = 0
        pattern.withUnsafeBytes { p in
            while start + pattern.count <= bytes.count,
                  let offset = find(p, in: bytes, from: start) {
                if out == nil { out = []; out!.reserveCapacity(bytes.count) }
                out!.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]))
                out!.append(contentsOf: mask)
                start = offset + pattern.count
            }
        }
        guard var result = out else { return nil }
        result.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start...]))
        return result
    }
}

import JSONKit
import ScriptHost

/// A write that creates something whose id the Hub chooses (a user, an entitlement, an
/// API key…): in plan mode the coordinator predicts a placeholder id for it, and in
/// apply mode reads the real id from the response, in `field`.
public struct CreatedID: Sendable, Equatable {
    /// The id's prefix: `usr` gives the placeholders `usr_planned_1`, `usr_planned_2`, …
    /// Lower-case letters only (1–16).
    public var prefix: String
    /// The response field that holds the new id (`id`; `delivery_id` for a webhook test).
    public var field: String

    public init(prefix: String, field: String = "id") {
        precondition(PlanPlaceholder.isPrefix(prefix), "a created id's prefix is 1–16 lower-case letters, not \(prefix)")
        self.prefix = prefix
        self.field = field
    }
}

/// What a planned write creates: the placeholder that stands for the new id in the
/// plan's later writes, and the response field the real id is read from at apply.
public struct PlannedCreation: Sendable, Equatable {
    /// `usr_planned_1`: `PlanPlaceholder.isPlaceholder` holds.
    public var placeholder: String
    /// The response field holding the real id (`id`).
    public var field: String

    public init(placeholder: String, field: String) {
        self.placeholder = placeholder
        self.field = field
    }
}

/// Placeholder ids: `PREFIX_planned_N`, where PREFIX is 1–16 lower-case letters and N
/// counts from 1 the run's creates with that prefix, in call order. The same recipe,
/// params and data give the same placeholders, so two plans of it are the same plan.
///
/// A placeholder is found in text as a maximal run `[a-z]+_planned_[0-9]+`: in
/// `usr_planned_12` only `usr_planned_12` is a placeholder (never `usr_planned_1`
/// followed by `2`), so substitution cannot cut one placeholder out of another.
public enum PlanPlaceholder {
    static let marker = Array("_planned_".utf8)

    /// `usr_planned_3` for the third `usr` create.
    static func make(prefix: String, number: Int) -> String { "\(prefix)_planned_\(number)" }

    static func isPrefix(_ s: String) -> Bool {
        (1...16).contains(s.utf8.count) && s.utf8.allSatisfy(isLower)
    }

    /// Whether `s` is exactly one placeholder (`usr_planned_1`; no leading zero, N < 10⁹).
    public static func isPlaceholder(_ s: String) -> Bool {
        guard let r = s.range(of: "_planned_") else { return false }
        let number = s[r.upperBound...].utf8
        return isPrefix(String(s[..<r.lowerBound])) && (1...9).contains(number.count)
            && number.allSatisfy(isDigit) && number.first != UInt8(ascii: "0")
    }

    /// The placeholders in `text` (byte ranges into its UTF-8), in order.
    static func tokens(in text: String) -> [(token: String, range: Range<Int>)] {
        let bytes = Array(text.utf8)
        guard bytes.count > marker.count else { return [] }
        var found: [(token: String, range: Range<Int>)] = []
        var i = 0, floor = 0
        while i + marker.count <= bytes.count {
            guard bytes[i..<(i + marker.count)].elementsEqual(marker) else { i += 1; continue }
            var start = i
            while start > floor && isLower(bytes[start - 1]) { start -= 1 }
            var end = i + marker.count
            while end < bytes.count && isDigit(bytes[end]) { end += 1 }
            if start < i && end > i + marker.count {
                found.append((String(decoding: bytes[start..<end], as: UTF8.self), start..<end))
                floor = end
                i = end
            } else {
                i += 1
            }
        }
        return found
    }

    static func isLower(_ b: UInt8) -> Bool { b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z") }
    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}

/// During an apply: which placeholder of the plan stands for which real id, learned from
/// the responses of the plan's creates as they are sent or replayed from the journal.
///
/// A planned write is compared with the recipe's after `substitute` replaces each bound
/// placeholder in its path, body and explicit key by the real id; an unbound placeholder
/// stays as it is, so a write that needs an id this apply has not created is refused.
public struct PlanBindings: Sendable, Equatable {
    /// Placeholder → real id.
    public private(set) var ids: [String: String] = [:]

    public init() {}

    /// The longest real id bound (the Hub's ids are far shorter).
    static let maxID = 255

    /// Binds `creation.placeholder` to the string in `response[creation.field]`. A
    /// response without it (or with a value that is not a short, printable, one-line
    /// string) binds nothing: the writes that use the placeholder are then refused.
    public mutating func bind(_ creation: PlannedCreation, response: ScriptValue) {
        guard case .string(let id) = response[creation.field], (1...Self.maxID).contains(id.utf8.count),
              id.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return }
        ids[creation.placeholder] = id
    }

    /// `text` with every bound placeholder replaced by its real id.
    public func substitute(_ text: String) -> String {
        guard !ids.isEmpty else { return text }
        let tokens = PlanPlaceholder.tokens(in: text).filter { ids[$0.token] != nil }
        guard !tokens.isEmpty else { return text }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        var copied = 0
        for t in tokens {
            out += bytes[copied..<t.range.lowerBound]
            out += Array(ids[t.token]!.utf8)
            copied = t.range.upperBound
        }
        out += bytes[copied...]
        return String(decoding: out, as: UTF8.self)
    }

    /// `value` with `substitute` applied to every string in it (object keys too).
    public func substitute(_ value: ScriptValue) -> ScriptValue {
        guard !ids.isEmpty else { return value }
        switch value {
        case .string(let s): return .string(substitute(s))
        case .array(let items): return .array(items.map { substitute($0) })
        case .object(let fields):
            var out: [String: ScriptValue] = [:]
            for (k, v) in fields { out[substitute(k)] = substitute(v) }
            return .object(out)
        default: return value
        }
    }

    /// `value` with `substitute` applied to every string in it (object keys too).
    public func substitute(_ value: JSONValue) -> JSONValue {
        guard !ids.isEmpty else { return value }
        switch value {
        case .string(let s): return .string(substitute(s))
        case .array(let items): return .array(items.map { substitute($0) })
        case .object(let fields):
            var out: [String: JSONValue] = [:]
            for (k, v) in fields { out[substitute(k)] = substitute(v) }
            return .object(out)
        default: return value
        }
    }

    /// The placeholders the write mentions (path, body, key), each with its real id or
    /// nil when this apply has not created it: `usr_planned_1 = usr_8f2k`.
    func describe(_ write: PlannedWrite) -> [String] {
        var text = [write.path, write.key]
        if let body = write.body { text.append(String(decoding: body.canonicalBytes, as: UTF8.self)) }
        var seen: Set<String> = []
        var out: [String] = []
        for t in text.flatMap(PlanPlaceholder.tokens(in:)) where seen.insert(t.token).inserted {
            out.append("\(t.token) = " + (ids[t.token].map(WriteMessages.f) ?? "(not created by this apply)"))
        }
        return out
    }
}

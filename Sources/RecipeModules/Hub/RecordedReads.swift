import SystemText
import Foundation
import HubClient
import ScriptHost
import RunJournal

/// The run's record of the Hub reads it made, so a resumed run makes the decisions the
/// earlier passes made and writes the same report and exports as a run that never stopped.
///
/// - Every read gets a key derived from the request — method, path, the query in
///   canonical form (a list page's includes its `limit` and `cursor`) — and the number
///   of earlier identical reads in this pass (`key(method:path:query:)`), as write keys are.
/// - While the run *replays* (a resume, from its start), a read whose key the journal
///   holds is answered from the record without touching the Hub (`replayed(_:)`). The
///   first read the record does not hold is the point where the earlier pass stopped:
///   from then on every read is live, even one whose key happens to be recorded.
/// - A live read is recorded (`record`): its answer — a body, a definite error (a 4xx
///   other than 401, 403, 408 and 429, which may not hold on a resume), or a list page
///   with the cursor of the page after it — as JSON text, masked like write responses.
///   Records wait in memory and commit with the run's next write (in the write's own
///   transaction: a write is never durable before the reads it was decided on) or at
///   `flushEvery` reads, and at the end of the pass (`flush`). A pass killed between
///   writes loses only the reads since its last write, which a resume reads live.
/// - An answer holding a loaded secret's text is not recorded: kept masked, a replay
///   would hand the recipe the mask, telling it that text it read (or wrote earlier and
///   read back) was the secret. Nor is any later read of the pass, so the record ends
///   there: a resume reads that answer live, exactly as the Hub gives it, and every read
///   after it. The run says so once (`onRecordingStopped`).
/// - The record of a run is bounded (`maxCount` reads, `maxBytes` bytes, every pass
///   together). Past either, reads are not recorded: the run says so once (`onRecordingStopped`),
///   and a resume reads those live (and may decide differently from the pass that stopped).
///
/// Plan mode records nothing (`isEnabled` false). Used from the run's thread only.
public final class RecordedReads {
    /// Reads a run's record holds at most (every pass together).
    public static let defaultMaxCount = 100_000
    /// Bytes of answers a run's record holds at most (every pass together): 64 MiB.
    public static let defaultMaxBytes = 64 << 20
    /// Live reads kept in memory before they are committed without waiting for a write.
    public static let flushEvery = 256

    let runID: String
    private let journal: Journal?
    let maxCount: Int
    let maxBytes: Int
    /// Whether answers are served from the record (until the first read it lacks).
    public private(set) var isReplaying: Bool
    /// Reads served from the record in this pass.
    public private(set) var replayedCount = 0
    /// Whether the cap was reached (reads are no longer recorded).
    public private(set) var isFull = false
    /// Whether this pass stopped recording at an answer holding a loaded secret's text.
    public private(set) var stoppedAtSecret = false
    /// Called once, when reads stop being recorded (the cap is reached, or an answer
    /// holds a loaded secret's text), with a message for the run's output.
    public var onRecordingStopped: ((String) -> Void)?
    private var totals: RecordedReadTotals
    private var pending: [RecordedRead] = []
    private var occurrences: [String: Int] = [:]
    private var sequence = 0

    /// - Parameters:
    ///   - journal: where the record is; nil records nothing (plan mode).
    ///   - replaying: a resume (the run has earlier passes): serve recorded answers.
    public init(runID: String, journal: Journal?, replaying: Bool,
                maxCount: Int = RecordedReads.defaultMaxCount, maxBytes: Int = RecordedReads.defaultMaxBytes) throws {
        self.runID = runID
        self.journal = journal
        self.maxCount = maxCount
        self.maxBytes = maxBytes
        isReplaying = replaying && journal != nil
        totals = try journal.map { try $0.recordedReadTotals(runID: runID) } ?? RecordedReadTotals()
        if totals.count >= maxCount || totals.bytes >= maxBytes { isFull = true }
    }

    /// A recorder that records and replays nothing.
    public static func disabled(runID: String) -> RecordedReads {
        // Cannot throw without a journal.
        try! RecordedReads(runID: runID, journal: nil, replaying: false)
    }

    package var isEnabled: Bool { journal != nil }

    /// The key of the next read of this request in this pass: `rd1-` + the first 40 hex
    /// digits of SHA-256(runID 0x00 method 0x00 path 0x00 query 0x00 occurrence), the
    /// query as `name=value` pairs sorted (bytes as sent, `&`-joined, each part with `%`,
    /// `&` and `=` percent-encoded).
    public func key(method: String, path: String, query: [(name: String, value: String)]) -> String {
        let canonical = Self.canonicalQuery(query)
        let identity = [method, path, canonical].joined(separator: "\u{0}")
        let occurrence = occurrences[identity, default: 0]
        occurrences[identity] = occurrence + 1
        var bytes = Data()
        for part in [runID, method, path, canonical] {
            bytes.append(contentsOf: Array(part.utf8))
            bytes.append(0)
        }
        bytes.append(contentsOf: Array(String(occurrence).utf8))
        return "rd1-" + Digest.sha256Hex(bytes).prefix(40)
    }

    static func canonicalQuery(_ query: [(name: String, value: String)]) -> String {
        func escaped(_ s: String) -> String {
            s.replacingOccurrences(of: "%", with: "%25").replacingOccurrences(of: "&", with: "%26")
                .replacingOccurrences(of: "=", with: "%3D")
        }
        return query.map { escaped($0.name) + "=" + escaped($0.value) }
            .sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            .joined(separator: "&")
    }

    /// While replaying: the recorded answer of `key`, or nil — and then the run goes
    /// live for good. Nil at once when live.
    /// A record that is not an answer to this request (`method`, `path`), or whose text
    /// is not a well-formed answer, is damaged: the resume stops before acting on it.
    public func replayed(_ key: String, method: String, path: String) throws -> RecordedAnswer? {
        guard isReplaying, let journal else { return nil }
        guard let entry = try journal.recordedReadEntry(runID: runID, key: key) else {
            isReplaying = false
            return nil
        }
        let answer: RecordedAnswer
        do {
            guard entry.method == method, entry.path == path else {
                throw JournalError(.corrupt, "it answers \(entry.method) \(ShownText.cut(entry.path, max: 120)), not \(method) \(ShownText.cut(path, max: 120))")
            }
            answer = try RecordedAnswer.parse(entry.response)
        } catch {
            throw JournalError(.corrupt, """
                the journal's record of read \(key) of run \(runID) cannot be read (\(error)); the run cannot be resumed \
                as it ran: start a new run (a new run checks the Hub's data again)
                """)
        }
        replayedCount += 1
        return answer
    }

    /// The recorded answer was not of the kind the read asks for (the recipe now reads
    /// something else there, e.g. it changed and was resumed with `--force`): that read
    /// and every later one are live.
    func mismatched() {
        replayedCount -= 1
        isReplaying = false
    }

    /// Keeps the answer of a live read (see the type's contract). `masking`: what masks
    /// the journal (the process's redactor); an answer holding one of its secrets is not kept.
    public func record(key: String, method: String, path: String, _ answer: RecordedAnswer, masking: SecretRedactor) throws {
        guard journal != nil, !isFull, !stoppedAtSecret else { return }
        let text = answer.text
        if let secret = masking.firstSecret(in: text) {
            stoppedAtSecret = true
            onRecordingStopped?("""
                a Hub read (\(method) \(ShownText.cut(path, max: 120))) was answered with the text of the secret \
                '\(secret)'; it is not recorded (a resume would be handed it masked), nor is any later read of this \
                pass, so a resume of this run reads them live and may decide differently from this pass
                """)
            return
        }
        let bytes = text.utf8.count
        guard totals.count + 1 <= maxCount, totals.bytes + bytes <= maxBytes else {
            isFull = true
            onRecordingStopped?("""
                this run's record of Hub reads is full (\(totals.count) reads, \(totals.bytes) bytes; \
                the cap is \(maxCount) reads or \(maxBytes >> 20) MiB); later reads are not recorded, so a \
                resume of this run reads them live and may decide differently from this pass
                """)
            return
        }
        totals.count += 1
        totals.bytes += bytes
        sequence += 1
        pending.append(RecordedRead(key: key, sequence: sequence, method: method, path: path, response: text))
        if pending.count >= Self.flushEvery { try flush() }
    }

    /// The live reads not committed yet, handed to the write about to be journalled
    /// (which commits them in its transaction).
    public func takePending() -> [RecordedRead] {
        defer { pending.removeAll() }
        return pending
    }

    /// Commits the live reads not committed yet.
    public func flush() throws {
        guard let journal, !pending.isEmpty else { return }
        let reads = takePending()
        try journal.recordReads(runID: runID, reads)
    }
}

/// A recorded answer: the body of a read, the Hub's definite error, or a list page.
public enum RecordedAnswer: Equatable {
    case body(HubJSON)
    case error(HubError)
    /// A page's items (each as canonical JSON) and the cursor of the next page (nil: last page).
    case page(items: [Data], next: String?)

    /// The JSON text kept in the journal.
    var text: String {
        switch self {
        case .body(let json):
            return #"{"body":"# + json.jsonText + "}"
        case .error(let e):
            var fields: [String: HubJSON] = ["code": .string(e.code), "message": .string(e.message), "hint": .string(e.hint)]
            if let status = e.status { fields["status"] = .integer(Int64(status)) }
            if let details = e.details { fields["details"] = details }
            if let id = e.requestID { fields["request_id"] = .string(id) }
            return #"{"error":"# + HubJSON.object(fields).jsonText + "}"
        case .page(let items, let next):
            var out = #"{"items":["#
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                out += String(decoding: item, as: UTF8.self)
            }
            return out + #"],"next":"# + (next.map { HubJSON.string($0).jsonText } ?? "null") + "}"
        }
    }

    static func parse(_ text: String) throws -> RecordedAnswer {
        let json = try HubJSON.parse(Data(text.utf8))
        if let body = json["body"] { return .body(body) }
        if let items = json["items"] {
            // A page's items are objects, and its `next` a cursor or null: anything else
            // would end or shape a list silently.
            guard let items = items.arrayValue, items.allSatisfy({ $0.objectValue != nil }),
                  let next = json["next"], next.isNull || next.stringValue != nil
            else { throw JournalError(.corrupt, "a recorded page needs a list of objects and a next cursor (a string or null)") }
            return .page(items: items.map { $0.encoded() }, next: next.stringValue)
        }
        if let e = json["error"], let code = e["code"]?.stringValue {
            guard e["status"] == nil || e["status"]?.intValue != nil else {
                throw JournalError(.corrupt, "a recorded error's status is not a number")
            }
            return .error(HubError(code: code, message: e["message"]?.stringValue ?? "", status: e["status"]?.intValue,
                                   details: e["details"], requestID: e["request_id"]?.stringValue,
                                   hint: e["hint"]?.stringValue))
        }
        throw JournalError(.corrupt, "a recorded read is neither a body, an error nor a page")
    }

    /// Whether a read that failed with `error` is recorded: a definite answer about the
    /// data (a 4xx), but not one that may change by a resume — the caller's credentials
    /// or permissions (401, 403), a timeout (408) or pacing (429).
    static func isRecordable(_ error: HubError) -> Bool {
        guard let status = error.status, (400..<500).contains(status) else { return false }
        return ![401, 403, 408, 429].contains(status)
    }
}

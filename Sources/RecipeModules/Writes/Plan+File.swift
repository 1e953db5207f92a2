import JSONKit
import Foundation
import ScriptHost
import SystemText
import RunJournal

/// The plan file: indented JSON with sorted keys.
///
/// ```json
/// { "format": "hubscript-plan/2", "run_id": "run_…",
///   "recipe": {"path": "recipes/offboard.lua", "sha256": "…"},
///   "profile": "default", "params": {…}, "created_at": "2026-11-30T14:22:33Z",
///   "writes": [ {"seq": 1, "key": "hs1-…", "method": "POST", "path": "/users/usr_ada/suspend",
///                "body": {…} | null, "summary": "suspend usr_ada", "predicted": …,
///                "creates": {"placeholder": "usr_planned_1", "field": "id"}} ],
///   "counts": {"reads": 3, "writes": 0, "replayed": 0, "planned": 1, "failed": 0} }
/// ```
/// Body digests are not stored: they are recomputed from `body` when the plan is loaded.
/// `"body": null` means no body; a `"predicted": null` is read back as `.nilValue`.
/// `creates` is present only on a write that creates something whose id the Hub chooses:
/// later writes name that id by the placeholder (see `PlanBindings`); a plan whose
/// placeholder is malformed, or made by two writes, is not a plan.
extension Plan {
    /// The longest plan file `save` writes and `load` reads: 1 GiB.
    public static let maxFileBytes = 1 << 30

    /// `1024 MiB`, `64 KiB` or `100 bytes`.
    static func sizeText(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : bytes >= 1 << 10 ? "\(bytes >> 10) KiB" : "\(bytes) bytes"
    }

    /// The plan as its JSON document.
    public func jsonValue() -> ScriptValue {
        let writeValues: [ScriptValue] = writes.map { w in
            var fields: [String: ScriptValue] = [
                "seq": .integer(Int64(w.sequence)), "key": .string(w.key), "method": .string(w.method),
                "path": .string(w.path), "body": w.body.map(ScriptValue.init) ?? .null, "summary": .string(w.summary),
                "predicted": w.predicted]
            if let c = w.creates { fields["creates"] = ["placeholder": .string(c.placeholder), "field": .string(c.field)] }
            return .object(fields)
        }
        let c = counts
        return [
            "format": .string(Plan.format), "run_id": .string(runID),
            "recipe": ["path": .string(recipePath), "sha256": .string(recipeSHA256)],
            "profile": .string(profile), "params": params, "created_at": .string(UTCTime.iso8601(createdAt)),
            "writes": .array(writeValues),
            "counts": ["reads": .integer(Int64(c.reads)), "writes": .integer(Int64(c.writes)),
                       "replayed": .integer(Int64(c.replayed)), "planned": .integer(Int64(c.planned)),
                       "failed": .integer(Int64(c.failed))],
        ]
    }

    /// Writes the plan to `url` atomically (a temporary file in the same folder, then
    /// rename), masked by `masking` (the redactor of the run that made it).
    public func save(to url: URL, masking: SecretRedactor) throws {
        let text: String
        do { text = masking.redact(try PrettyJSON.encode(jsonValue())) } catch {
            throw PlanError(.io, "cannot encode the plan: \(error)")
        }
        guard text.utf8.count <= Plan.maxFileBytes else {
            throw PlanError(.io, "cannot write the plan \(url.path): it would be longer than \(Plan.sizeText(Plan.maxFileBytes)), "
                            + "more than a plan file can hold; plan fewer writes per run (a recipe's params can split the work)")
        }
        let temp = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).\(UInt32.random(in: 0 ... .max)).tmp")
        do {
            try Data(text.utf8).write(to: temp)
            // rename(2) replaces the target atomically: readers see the old plan or the new one.
            guard rename(temp.path, url.path) == 0 else {
                throw PlanError(.io, "cannot write the plan \(url.path): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(at: temp)
            if let error = error as? PlanError { throw error }
            throw PlanError(.io, "cannot write the plan \(url.path): \(FileErrorText.reason(error, path: url.path))")
        }
    }

    /// Reads a plan written by `save(to:)`.
    /// - Throws: `PlanError` `.io`, `.notAPlan` (naming the first bad field) or
    ///   `.unsupportedFormat`.
    /// A file longer than `maxBytes` (`/dev/zero`, a log given by mistake) is refused
    /// as soon as that many bytes were read, instead of filling the memory.
    public static func load(from url: URL, maxBytes: Int = Plan.maxFileBytes) throws -> Plan {
        let data: Data
        do { data = Data(try FileBytes.read(url.path, atMost: maxBytes)) } catch let error as FileBytes.TooLong {   // never waits on a FIFO
            throw PlanError(.io, "cannot read the plan \(url.path): it is longer than \(Plan.sizeText(error.limit)), "
                            + "more than a plan file can hold; give the file hubscript plan --out wrote")
        } catch {
            throw PlanError(.io, "cannot read the plan \(url.path): \(FileErrorText.reason(error, path: url.path))")
        }
        let doc: ScriptValue
        do { doc = try JSONCodec.decode(data) } catch {
            throw PlanError(.notAPlan, "\(url.path) is not a hubscript plan (\(error)); make one with hubscript plan RECIPE --out \(url.lastPathComponent)")
        }
        guard case .object = doc, let format = doc["format"].stringValue, format.hasPrefix("hubscript-plan/") else {
            throw PlanError(.notAPlan, "\(url.path) is not a hubscript plan (it has no \"format\": \"hubscript-plan/…\"); make one with hubscript plan RECIPE --out \(url.lastPathComponent)")
        }
        guard format == Plan.format else {
            throw PlanError(.unsupportedFormat, "\(url.path) is a plan of format \(format); this hubscript reads \(Plan.format). Make a new plan with this hubscript (hubscript plan RECIPE --out \(url.lastPathComponent)).")
        }
        do { return try PlanDecoder(doc: doc).plan() } catch let missing as PlanDecoder.Missing {
            throw PlanError(.notAPlan, "\(url.path) is not a valid hubscript plan: \(missing.field) \(missing.problem ?? "is missing or has the wrong type")")
        }
    }
}

/// Reads a plan document field by field, naming the first field that is wrong.
private struct PlanDecoder {
    struct Missing: Error {
        let field: String
        /// What is wrong, when it is not "missing or of the wrong type".
        var problem: String?
    }
    let doc: ScriptValue

    func plan() throws -> Plan {
        guard case .array(let items) = doc["writes"] else { throw Missing(field: "writes") }
        let writes = try items.enumerated().map { n, w in try write(w, at: "writes[\(n)]") }
        var placeholders: Set<String> = []
        for (n, w) in writes.enumerated() {
            if let c = w.creates, !placeholders.insert(c.placeholder).inserted {
                throw Missing(field: "writes[\(n)].creates.placeholder",
                              problem: "\(c.placeholder) is created by an earlier write too")
            }
        }
        guard let created = UTCTime.parseISO8601(try string(doc["created_at"], "created_at")) else {
            throw Missing(field: "created_at")
        }
        guard case .object = doc["params"] else { throw Missing(field: "params") }
        let c = doc["counts"]
        let counts = RunCounts(reads: try int(c["reads"], "counts.reads"), writes: try int(c["writes"], "counts.writes"),
                               replayed: try int(c["replayed"], "counts.replayed"),
                               planned: try int(c["planned"], "counts.planned"), failed: try int(c["failed"], "counts.failed"))
        return Plan(runID: try string(doc["run_id"], "run_id"),
                    recipePath: try string(doc["recipe"]["path"], "recipe.path"),
                    recipeSHA256: try string(doc["recipe"]["sha256"], "recipe.sha256"),
                    profile: try string(doc["profile"], "profile"), params: doc["params"],
                    createdAt: created, writes: writes, counts: counts)
    }

    private func write(_ w: ScriptValue, at where_: String) throws -> PlannedWrite {
        // A prediction of "no body" (`.nilValue`) is written as null and read back as `.nilValue`.
        var predicted = w["predicted"]
        guard !predicted.isNil else { throw Missing(field: "\(where_).predicted") }
        if predicted == .null { predicted = .nilValue }
        var creates: PlannedCreation?
        if !w["creates"].isNil {
            let placeholder = try string(w["creates"]["placeholder"], "\(where_).creates.placeholder")
            let field = try string(w["creates"]["field"], "\(where_).creates.field")
            guard PlanPlaceholder.isPlaceholder(placeholder) else { throw Missing(field: "\(where_).creates.placeholder") }
            guard (1...64).contains(field.utf8.count) else { throw Missing(field: "\(where_).creates.field") }
            creates = PlannedCreation(placeholder: placeholder, field: field)
        }
        let body: JSONValue?
        do { body = try WriteBody.normalized(w["body"]).map { try JSONValue($0) } } catch { throw Missing(field: "\(where_).body") }
        return PlannedWrite(sequence: try int(w["seq"], "\(where_).seq"), key: try string(w["key"], "\(where_).key"),
                            method: try string(w["method"], "\(where_).method"),
                            path: try string(w["path"], "\(where_).path"), body: body,
                            summary: try string(w["summary"], "\(where_).summary"), predicted: predicted,
                            creates: creates)
    }

    private func string(_ v: ScriptValue, _ field: String) throws -> String {
        guard let s = v.stringValue else { throw Missing(field: field) }
        return s
    }

    private func int(_ v: ScriptValue, _ field: String) throws -> Int {
        guard case .integer(let i) = v else { throw Missing(field: field) }
        return Int(i)
    }
}

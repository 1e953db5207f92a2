import Foundation
import ScriptHost
import SystemText

/// One file an export wrote.
public struct ExportedFile: Sendable, Equatable {
    /// The export name, e.g. `events.jsonl`.
    public let name: String
    /// Data rows written (a CSV header is not a row).
    public let rows: Int
    /// File size in bytes.
    public let bytes: Int
    /// Absolute path of the file; for a vault export, its name (`vault:audit/ada.jsonl`).
    public let path: String
    /// For a vault export, the object's id (`obj_…`); nil for a file, and for a vault
    /// export of a plan (which stores nothing).
    public let objectID: String?

    public init(name: String, rows: Int, bytes: Int, path: String, objectID: String? = nil) {
        self.name = name
        self.rows = rows
        self.bytes = bytes
        self.path = path
        self.objectID = objectID
    }

    /// Whether it went to the vault (`vault:NAME`).
    public var inVault: Bool { name.hasPrefix(ExportName.vaultPrefix) }

    /// Whether the export never completed (the run stopped mid-way): the file is
    /// `NAME.incomplete` (see `ExportSession.finish`), holding the rows written so far.
    public var incomplete = false

    /// The suffix of an export kept incomplete: `bulk-grant-report.csv.incomplete`.
    public static let incompleteSuffix = ".incomplete"
}

/// The exports of one run: where they go and what was written.
///
/// Create one per run and pass it to `ExportPlugin.make(session:)`. The output folder
/// is created on the first export (mode 0700; missing parents are created too) and
/// files in it get mode 0600. A name must be a data file name of its format
/// (`ExportName.fileName`: never a file hubscript reads). Each export streams into a
/// hidden temporary file created exclusively, which is synced and renamed to `NAME` when
/// the export completes, replacing a plain file of that name but never a link or a
/// folder (`ExportFolder`), and removing a `NAME.incomplete` an earlier pass left. An
/// export that never completes (the run stopped mid-way: a limit, an error, a refused
/// write) keeps what it wrote: `finish()` writes out its rows and renames it
/// `NAME.incomplete` (`incompleteFiles`), so a stopped run's report is never lost and
/// never passes for a finished one. Names are reserved when an export
/// starts, so a name can be used once per run. Thread-safe.
public final class ExportSession: @unchecked Sendable {
    /// Where this run's exports go (standardized when first read: a run that exports
    /// nothing does no URL work for it).
    public var folder: URL { standardizedFolder.value }
    private let standardizedFolder: OnFirstUse<URL>
    /// Where `vault:NAME` exports go; nil when the run has no vault (they fail).
    public var vault: VaultExportTarget?
    private let lock = NSLock()
    private var completed: [ExportedFile] = []
    private var reserved: Set<String> = []
    private var active: [Int: ActiveExport] = [:]
    private var nextID = 1
    /// The folder, once created and opened by the first export.
    private var openFolder: ExportFolder?

    /// What masks every export (the run's redactor: the files are the run's).
    let masking: SecretRedactor

    /// `masking`: the run's redactor, applied to everything an export writes.
    public init(folder: URL, masking: SecretRedactor) {
        standardizedFolder = OnFirstUse { folder.standardizedFileURL }
        self.masking = masking
    }

    /// The next page of the `hub` list with this handle, each item as canonical JSON,
    /// or nil at its end. Set by the run when the `hub` module is installed: it lets
    /// `export.jsonl(name, hub.audit.query{…})` stream the Hub's pages straight into the
    /// file, without turning every item into a Lua table and back.
    package var hubPages: ((Int) throws -> [Data]?)?

    deinit { finish() }

    /// The files completed so far, in order; after `finish()`, the files kept incomplete follow.
    public var files: [ExportedFile] { lock.withLock { completed + incomplete } }

    /// The exports `finish()` kept as `NAME.incomplete`, in the order they started.
    public var incompleteFiles: [ExportedFile] { lock.withLock { incomplete } }
    private var incomplete: [ExportedFile] = []

    /// `wrote 3 files to /…/out` (or `wrote 1 file …`); nil when nothing was exported.
    public var summaryLine: String? {
        let files = self.files.filter { !$0.inVault && !$0.incomplete }
        guard !files.isEmpty else { return nil }
        return "wrote \(files.count) \(files.count == 1 ? "file" : "files") to \(folder.path)"
    }

    /// Ends the session: a file export still in progress keeps what it wrote as
    /// `NAME.incomplete` (`incompleteFiles`; removed if that cannot be done); a vault
    /// export in progress is dropped. Completed files stay. Idempotent; also runs on deinit.
    public func finish() {
        let abandoned = lock.withLock {
            let list = active.sorted { $0.key < $1.key }.map(\.value)
            active.removeAll()
            return list
        }
        let kept = abandoned.compactMap { $0.keepIncomplete() }
        lock.withLock { incomplete += kept }
    }

    // MARK: Used by ExportPlugin

    /// Reserves `name` (a valid plain name, `ExportName.isValid`) and the file name it
    /// makes, and creates its temporary file; returns the export's handle.
    func begin(name: String, format: ExportFormat, function: String) throws -> Int {
        try lock.withLock {
            func alreadyExported(_ name: String) -> ScriptMessageError {
                ScriptMessageError("\(function): \(SoftFailure.quoted(name)) was already exported in this run; use another name")
            }
            guard !reserved.contains(name) else { throw alreadyExported(name) }
            let fileName = try ExportName.fileName(for: name, format: format, function: function)
            guard !reserved.contains(fileName) else { throw alreadyExported(fileName) }
            let export: ActiveExport
            do {
                if fileName.hasPrefix(ExportName.vaultPrefix) {
                    export = try ActiveExport(name: fileName, function: function, format: format,
                                              vault: try VaultObjectSink.open(vault, name: fileName, function: function), masking: masking)
                } else {
                    export = try ActiveExport(name: fileName, function: function, format: format,
                                              folder: try preparedFolder(function: function), masking: masking)
                }
            } catch let e as ExportIOError { throw ScriptMessageError("\(function): \(e.description)") }
            reserved.insert(name)
            reserved.insert(fileName)
            let id = nextID
            nextID += 1
            active[id] = export
            return id
        }
    }

    func export(_ id: Int) throws -> ActiveExport {
        guard let export = lock.withLock({ active[id] }) else {
            throw ScriptMessageError("export: this export has already finished")
        }
        return export
    }

    /// Flushes, closes and renames the export into place; records and returns it.
    func complete(_ id: Int) throws -> ExportedFile {
        let export = try self.export(id)
        lock.withLock { _ = active.removeValue(forKey: id) }
        let file: ExportedFile
        do { file = try export.complete() } catch let e as ExportIOError {
            export.abandon()
            throw ScriptMessageError("\(export.function): \(e.description)")
        }
        lock.withLock { completed.append(file) }
        return file
    }

    /// The export folder, created (0700, with missing parents) and opened on first use.
    private func preparedFolder(function: String) throws -> ExportFolder {
        if let openFolder { return openFolder }
        let path = folder.path
        do {
            try FileManager.default.createDirectory(
                at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw ScriptMessageError("\(function): cannot create the export folder \(path): \(FileErrorText.reason(error))")
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw ScriptMessageError("\(function): cannot create the export folder \(path): \(String(cString: strerror(errno)))")
        }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ScriptMessageError("\(function): the export folder \(path) is not a folder")
        }
        let opened = try ExportFolder(path: path)
        openFolder = opened
        return opened
    }
}

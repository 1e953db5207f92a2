import Foundation
import SHA256Kit

extension Vault {
    /// A writer that streams a new object into the vault (see `VaultObjectWriter`);
    /// stored under `name`, or under its id if `name` is nil.
    public func makeObjectWriter(name: String? = nil) throws -> VaultObjectWriter {
        try VaultObjectWriter(vault: self, name: name)
    }

    /// Stores the file at `path` ("-" for standard input) as an object.
    @discardableResult
    public func putObject(file path: String, name: String? = nil) throws -> VaultObjectInfo {
        let fd = path == "-" ? 0 : try FileIO.open(path, O_RDONLY).orThrow(.unreadable) { "cannot read \(path): \($0)" }
        defer { if fd != 0 { close(fd) } }
        let writer = try makeObjectWriter(name: name)
        try writer.write(contentsOf: fd, what: path == "-" ? "standard input" : path)
        return try writer.finish()
    }

    /// The id of the object stored as `name` (or `name` itself if it is an object's id).
    public func objectID(named name: String) throws -> String {
        try object(name).record.id
    }

    /// Streams the plaintext of the object `ref` (a name or an `obj_…` id) to `sink`,
    /// chunk by chunk, each authenticated before it is passed on. The whole object is
    /// only known to be complete when this returns: after an error (`tampered`,
    /// `truncated`), discard what `sink` received.
    @discardableResult
    public func readObject(_ ref: String, into sink: (UnsafeRawBufferPointer) throws -> Void) throws -> VaultObjectInfo {
        let (name, record) = try object(ref)
        let what = name == record.id ? "object \(record.id)" : "object '\(name)' (\(record.id))"
        let path = objectsPath + "/" + record.id
        let fd: Int32
        switch FileIO.open(path, O_RDONLY) {
        case .success(let opened): fd = opened
        case .failure(let e) where e.code == ENOENT:
            throw VaultError(.notFound, "the file of \(what) is missing from \(objectsPath) (restore it from a backup)", entry: name)
        case .failure(let e): throw VaultError(.unreadable, "cannot read the file of \(what): \(e.text)", entry: name)
        }
        defer { close(fd) }
        var headerBytes = [UInt8](repeating: 0, count: ObjectFileHeader.size)
        let got = try headerBytes.withUnsafeMutableBytes { try FileIO.readFull(fd, into: $0).orThrow(.unreadable) { "cannot read the file of \(what): \($0)" } }
        let header = try ObjectFileHeader.parse(Array(headerBytes[0..<got]), what: what)
        var info = stat()
        let expected = header.fileSize(plaintext: record.size)
        if fstat(fd, &info) == 0, UInt64(info.st_size) != expected {
            let size = UInt64(info.st_size)
            throw size < expected
                ? VaultError(.truncated, "the file of \(what) is truncated (\(size) of \(expected) bytes): restore it from a backup", entry: name)
                : VaultError(.corrupt, "the file of \(what) is longer than it should be (\(size), not \(expected) bytes)", entry: name)
        }
        guard let stream = try SecretStream.pull(key: try record.fileKey(), header: header.streamHeader) else {
            throw VaultError(.tampered, "\(what) failed authentication at its header", entry: name)
        }
        let ad = header.fixedBytes
        let plain = try SecretBytes(count: header.chunkSize)
        let sealedSize = header.chunkSize + Sodium.streamOverhead
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: sealedSize, alignment: 16)
        defer { chunk.deallocate() }
        var total: UInt64 = 0
        while true {
            let n = try FileIO.readFull(fd, into: chunk).orThrow(.unreadable) { "cannot read the file of \(what): \($0)" }
            guard n > 0 else {
                throw VaultError(.truncated, "the file of \(what) ends before its final chunk (\(total) bytes read): restore it from a backup", entry: name)
            }
            guard let (count, tag) = stream.pull(UnsafeRawBufferPointer(rebasing: chunk[0..<n]), ad: ad,
                                                 into: UnsafeMutableRawBufferPointer(start: plain.pointer, count: header.chunkSize)) else {
                throw VaultError(.tampered, "\(what) failed authentication after \(total) bytes: it was altered or corrupted", entry: name)
            }
            try sink(UnsafeRawBufferPointer(start: plain.pointer, count: count))
            total += UInt64(count)
            if tag == .final { break }
            guard n == sealedSize else {
                throw VaultError(.truncated, "the file of \(what) ends before its final chunk (\(total) bytes read): restore it from a backup", entry: name)
            }
        }
        var extra: UInt8 = 0
        guard read(fd, &extra, 1) == 0, total == record.size else {
            throw VaultError(.tampered, "\(what) does not end where its entry says (\(total) of \(record.size) bytes)", entry: name)
        }
        return record.info(name: name)
    }

    /// Writes the plaintext of the object `ref` to `path` atomically (mode 0600): the
    /// file appears complete and verified, or not at all (an existing file is
    /// replaced only on success). Where Linux's `O_TMPFILE` works, even a crash leaves
    /// no partial plaintext anywhere.
    @discardableResult
    public func getObject(_ ref: String, to path: String) throws -> VaultObjectInfo {
        let url = URL(fileURLWithPath: path)
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw VaultError(.ioError, "\(path) is a folder: give a file name to --out")
        }
        _ = try object(ref)
        let out = try AtomicFile(folder: url.deletingLastPathComponent().path, baseName: url.lastPathComponent,
                                 anonymous: true, label: "output", checkpoint: options.checkpoint)
        defer { out.discard() }
        var first = true
        let info = try readObject(ref) { bytes in
            try out.write(bytes)
            if first { options.checkpoint("output.temp-partial"); first = false }
        }
        options.checkpoint("output.temp-written")
        try out.commit(as: path)
        return info
    }

    // MARK: Internals

    /// The object entry named `ref`, or whose id is `ref`, with its key record.
    func object(_ ref: String) throws -> (name: String, record: ObjectKeyRecord) {
        if let r = index.records.first(where: { $0.name == ref }) {
            guard r.kind == .object else {
                throw VaultError(.notFound, "'\(ref)' is a secret, not an object", entry: ref)
            }
            return (r.name, ObjectKeyRecord(try openRecord(r)))
        }
        if let k = try objectRecordIndex(id: ref) {
            let r = index.records[k]
            return (r.name, ObjectKeyRecord(try openRecord(r)))
        }
        throw VaultError(.notFound, "no object '\(ref)' in the vault \(folder.path)", entry: ref)
    }

    /// Records a finished object file under `name` (replacing an object of that name,
    /// whose file is then deleted).
    func addObject(_ record: ObjectKeyRecord, name: String) throws {
        var replaced: String?
        try locked {
            try reload()
            let existing = index.records.firstIndex { $0.name == name }
            if let k = existing, index.records[k].kind != .object {
                throw VaultError(.invalidName, "'\(name)' is a secret in the vault: choose another name for the object", entry: name)
            }
            try authenticateAll(except: name)
            if let k = existing, let old = try? openRecord(index.records[k]) { replaced = ObjectKeyRecord(old).id }
            let created = existing.map { index.records[$0].created } ?? now
            let entry = record.plain.withUnsafeBytes { seal(.object, name: name, created: created, plaintext: $0) }
            var next = index
            if let k = existing { next.records[k] = entry } else { next.records.append(entry) }
            try write(next)
        }
        if let replaced, replaced != record.id { removeObjectFile(replaced) }
    }

    /// Deletes an object's file after its entry is gone (a crash before this leaves
    /// an unreferenced ciphertext file, nothing worse).
    func removeObjectFile(_ id: String) {
        unlink(objectsPath + "/" + id)
        _ = FileIO.syncFolder(objectsPath)
    }

    /// Checks that the file of `record` is there and hashes to its id.
    func checkObjectFile(_ record: ObjectKeyRecord, name: String) throws {
        let what = name == record.id ? "object \(record.id)" : "object '\(name)' (\(record.id))"
        let path = objectsPath + "/" + record.id
        let fd = try FileIO.open(path, O_RDONLY).orThrow(.notFound) { "cannot read the file of \(what): \($0)" }
        defer { close(fd) }
        var hasher = SHA256()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let n = try FileIO.readFull(fd, into: buffer).orThrow(.unreadable) { "cannot read the file of \(what): \($0)" }
            if n == 0 { break }
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        guard hasher.finish() == record.digest else {
            throw VaultError(.tampered, "the file of \(what) does not hash to its id: it was altered or replaced", entry: name)
        }
    }
}

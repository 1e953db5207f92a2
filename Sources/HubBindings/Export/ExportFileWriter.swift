import Foundation
import ScriptHost

/// Writes one export file through a 64 KiB buffer with POSIX calls. Every piece
/// appended (a row, a page of the Hub's items) is masked by `SecretRedactor` first.
///
/// The file is opened by its `ExportFolder` (created exclusively, mode 0600: exports may
/// hold private data); the writer owns the descriptor. Memory stays constant: the buffer
/// is written out whenever it fills. Not thread-safe; the owning session serialises use.
final class ExportFileWriter {
    static let bufferSize = 64 << 10

    let path: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    /// Bytes accepted so far (written or buffered).
    private(set) var bytes = 0

    /// Writes to `fd` (an open, writable file), which the writer closes; `path` is for messages.
    init(fd: Int32, path: String) {
        self.path = path
        self.fd = fd
        buffer.reserveCapacity(Self.bufferSize)
    }

    deinit { close() }

    func append(bytes data: Data) throws {
        let data = SecretRedactor.shared.redact(data)
        buffer.append(contentsOf: data)
        bytes += data.count
        if buffer.count >= Self.bufferSize { try flush() }
    }

    func append(_ text: String) throws {
        let text = SecretRedactor.shared.redact(text)
        buffer.append(contentsOf: text.utf8)
        bytes += text.utf8.count
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Appends `row`; one larger than the buffer is written straight from its bytes
    /// (after what is buffered), so a large row is never copied into the buffer.
    func append(bytes row: [UInt8]) throws {
        if SecretRedactor.shared.isActive, let masked = row.withUnsafeBytes({ SecretRedactor.shared.redacted($0) }) {
            return try append(bytes: Data(masked))
        }
        if row.count < Self.bufferSize {
            buffer.append(contentsOf: row)
            bytes += row.count
            if buffer.count >= Self.bufferSize { try flush() }
            return
        }
        try flush()
        try row.withUnsafeBytes { try writeAll($0) }
        bytes += row.count
    }

    /// Writes out the buffer.
    func flush() throws {
        try buffer.withUnsafeBytes { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ data: UnsafeRawBufferPointer) throws {
        guard fd >= 0 else { throw ExportIOError("cannot write \(path): the file is closed") }
        var offset = 0
        while offset < data.count {
            let n = write(fd, data.baseAddress! + offset, data.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw ExportIOError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    /// Writes out the buffer and waits until the file's contents are on disk.
    func sync() throws {
        try flush()
        guard fsync(fd) == 0 else { throw ExportIOError("cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    /// Closes the file without flushing (idempotent).
    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
    }
}

/// A file-system failure while exporting; the message names the path.
struct ExportIOError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

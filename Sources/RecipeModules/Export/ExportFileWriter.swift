import SystemText
import Foundation
import ScriptHost

/// Where an export's bytes go: a file descriptor, or an object streamed into the vault.
protocol ExportSink: AnyObject {
    /// Writes all of `data`; errors name `path`.
    func write(_ data: UnsafeRawBufferPointer, path: String) throws
    /// Waits until what was written is durable (a file's `fsync`; nothing for the vault,
    /// whose object is synced when it is finished).
    func sync(path: String) throws
    /// Stops writing (idempotent).
    func close()
}

/// Writes one export through a 64 KiB buffer into its sink (a file with POSIX calls, or
/// a vault object). Every piece appended (a row, a page of the Hub's items) is masked
/// by `masking` (the run's `SecretRedactor`) first.
///
/// A file is opened by its `ExportFolder` (created exclusively, mode 0600: exports may
/// hold private data); the writer owns the descriptor. Memory stays constant: the buffer
/// is written out whenever it fills. Not thread-safe; the owning session serialises use.
final class ExportFileWriter {
    static let bufferSize = 64 << 10

    let path: String
    private let sink: any ExportSink
    private let masking: SecretRedactor
    private var buffer: [UInt8] = []
    /// Bytes accepted so far (written or buffered).
    private(set) var bytes = 0

    /// Writes to `fd` (an open, writable file), which the writer closes; `path` is for messages.
    convenience init(fd: Int32, path: String, masking: SecretRedactor) {
        self.init(sink: FileDescriptorSink(fd: fd), path: path, masking: masking)
    }

    init(sink: any ExportSink, path: String, masking: SecretRedactor) {
        self.path = path
        self.sink = sink
        self.masking = masking
        buffer.reserveCapacity(Self.bufferSize)
    }

    func append(bytes data: Data) throws {
        let data = masking.redact(data)
        buffer.append(contentsOf: data)
        bytes += data.count
        if buffer.count >= Self.bufferSize { try flush() }
    }

    func append(_ text: String) throws {
        let text = masking.redact(text)
        buffer.append(contentsOf: text.utf8)
        bytes += text.utf8.count
        if buffer.count >= Self.bufferSize { try flush() }
    }

    /// Appends `row`; one larger than the buffer is written straight from its bytes
    /// (after what is buffered), so a large row is never copied into the buffer.
    func append(bytes row: [UInt8]) throws {
        if masking.isActive, let masked = row.withUnsafeBytes({ masking.redacted($0) }) {
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
        try sink.write(data, path: path)
    }

    /// Writes out the buffer and waits until the export's contents are durable.
    func sync() throws {
        try flush()
        try sink.sync(path: path)
    }

    /// Closes the sink without flushing (idempotent).
    func close() {
        sink.close()
    }
}

/// An export file's descriptor.
final class FileDescriptorSink: ExportSink {
    private var fd: Int32

    init(fd: Int32) { self.fd = fd }

    deinit { close() }

    func write(_ data: UnsafeRawBufferPointer, path: String) throws {
        guard fd >= 0 else { throw ExportIOError("cannot write \(path): the file is closed") }
        var offset = 0
        while offset < data.count {
            let n = Glibc.write(fd, data.baseAddress! + offset, data.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw ExportIOError("cannot write \(path): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    func sync(path: String) throws {
        guard fsync(fd) == 0 else { throw ExportIOError("cannot write \(path): \(String(cString: strerror(errno)))") }
    }

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

import Foundation
import HubClient

/// Which configuration files hubscript trusts: the file decides which Hub your
/// credentials are sent to, so nobody but you (or root) may be able to change it.
///
/// The rule, for every configuration file however it is found (`--config`,
/// `$HUBSCRIPT_CONFIG`, `./hubscript.config.lua`, `$XDG_CONFIG_HOME/hubscript/config.lua`),
/// as git's `safe.directory` does for repositories: the file (after symbolic links) must
/// be a regular file owned by the current user or by root, and not writable by its group
/// or by others. A recipe cannot write one either: exports only create data files
/// (`ExportName.fileName`), never `.lua`.
///
/// The file is checked and read through one descriptor, so it cannot be swapped between
/// the check and the read.
enum ConfigTrust {
    /// The contents of the configuration file at `path`, if it is trusted.
    /// - Throws: `HubConfigError` saying why the file is not trusted and how to fix it.
    static func read(_ path: String) throws -> Data {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw HubConfigError("config \(path): cannot read it: \(reason())") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw HubConfigError("config \(path): cannot read it: \(reason())") }
        try check(info, path: path)
        // Into one buffer the file's size (plus a byte, to see the end in one more read),
        // grown only if the file grew: a zeroed 64 KiB chunk copied into `Data` costs more
        // than the read itself.
        // A file larger than `maxBytes` (say a sparse one of terabytes) is refused before
        // any buffer is made: a buffer of its size failed to allocate and aborted.
        guard info.st_size <= Self.maxBytes else { throw Self.tooLarge(path) }
        var bytes = [UInt8]()
        var capacity = max(Int(info.st_size), 0) + 1
        while true {
            if bytes.count == capacity {
                guard capacity <= Self.maxBytes else { throw Self.tooLarge(path) }   // it grew while read
                capacity = min(capacity * 2, Self.maxBytes + 1)
            }
            let before = bytes.count
            var failure: Int32 = 0
            bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
                _ = buffer.initialize(from: bytes)
                count = before
                while count < capacity {
                    let n = Glibc.read(fd, buffer.baseAddress! + count, capacity - count)
                    if n < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return
                    }
                    if n == 0 { return }
                    count += n
                }
            }
            if failure != 0 {
                errno = failure
                throw HubConfigError("config \(path): cannot read it: \(reason())")
            }
            if bytes.count < capacity { return Data(bytes) }
        }
    }

    /// The largest configuration file read (far more than a data file's evaluation,
    /// `LuaDataFile.memoryBytes`, can take).
    static let maxBytes = 64 << 20

    private static func tooLarge(_ path: String) -> HubConfigError {
        HubConfigError("config \(path): is larger than \(maxBytes >> 20) MiB; a configuration is a small Lua file that returns a table")
    }

    /// Throws unless `info` describes a regular file owned by the current user or root
    /// and writable by nobody else.
    static func check(_ info: stat, path: String, user: uid_t = geteuid()) throws {
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw HubConfigError("config \(path): is not a regular file")
        }
        let why = "hubscript reads only a configuration that nobody but you (or root) can change, since it decides where your credentials are sent"
        guard info.st_uid == user || info.st_uid == 0 else {
            throw HubConfigError("""
                config \(path): is owned by another user (uid \(info.st_uid)), not by you (uid \(user)) or root; \(why). \
                Fix: chown \(userName(user)) \(path), or use a file of your own (--config)
                """)
        }
        let writable = info.st_mode & 0o022
        guard writable == 0 else {
            let whom = writable == 0o022 ? "its group and others" : writable == 0o020 ? "its group" : "others"
            let mode = String(info.st_mode & 0o7777, radix: 8)
            throw HubConfigError("""
                config \(path): is writable by \(whom) (mode \(String(repeating: "0", count: max(0, 4 - mode.count)) + mode)); \
                \(why). Fix: chmod go-w \(path)
                """)
        }
    }

    private static func userName(_ uid: uid_t) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return String(uid) }
        return String(cString: name)
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Absolute paths built as strings. `URL.path` is costly on its first call in a process
/// (run-time lookups inside Foundation; docs/performance.md), which a run that only
/// prints should not pay; these give the same paths as `URL(fileURLWithPath:)`'s `path`
/// and `standardizedFileURL.path` (SystemTextTests compares them).
public enum AbsolutePath {
    /// `path` as `URL(fileURLWithPath: path).path` gives it: an absolute path as it is,
    /// without trailing slashes; a relative one joined to the current directory with its
    /// `.` and `..` components resolved. With `resolvingParents`, as
    /// `standardizedFileURL.path`: absolute paths are resolved too (lexically: links are
    /// not followed; empty and `.` components dropped, `..` removes the one before it).
    public static func of(_ path: String, resolvingParents: Bool = false) -> String {
        if path.hasPrefix("/") && !resolvingParents {
            var trimmed = Substring(path)
            while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            return String(trimmed)
        }
        let directory = path.hasPrefix("/") ? "" : currentDirectory()
        let joined = path.hasPrefix("/") ? path : directory + (directory.hasSuffix("/") ? "" : "/") + path
        // Without `resolvingParents`, empty components stay, as in `URL`'s path (RFC
        // 3986's dot-segment removal: `a//b` stays `…/a//b`, `x/..//y` is `…//y`); a
        // component `.` or `..` that ends the path leaves a trailing slash, cut below.
        // One difference: `..` goes up from the last named folder, as the file system
        // does (`a//../c` is `…/c`), where `URL` only removes the empty component
        // (`…/a/c`, another file than the one the path names).
        let keepsEmpty = !resolvingParents
        let parts = joined.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        var components: [Substring] = []
        for (index, component) in zip(parts.indices, parts) {
            if component == "." || component == ".." {
                if component == ".." {
                    while components.last?.isEmpty == true { components.removeLast() }
                    if !components.isEmpty { components.removeLast() }
                }
                if keepsEmpty, index == parts.index(before: parts.endIndex) { components.append("") }
            } else if keepsEmpty || !component.isEmpty {
                components.append(component)
            }
        }
        while keepsEmpty, components.count > 1, components.last?.isEmpty == true { components.removeLast() }
        guard !components.isEmpty, components != [""] else { return "/" }
        // String(component), not `+= component`: appending a Substring goes through the
        // generic append, whose first call resolves associated types at run time.
        var result = ""
        for component in components { result += "/" + String(component) }
        return result
    }

    /// The current directory (`getcwd`), or `/` if it cannot be read.
    public static func currentDirectory() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" }
        let length = buffer.firstIndex(of: 0) ?? buffer.count
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

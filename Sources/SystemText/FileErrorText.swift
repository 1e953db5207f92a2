import Foundation

/// Plain words for a file-system error, never Foundation's own text
/// ("The operation could not be completed. (NSCocoaErrorDomain error 256.)").
public enum FileErrorText {
    /// Why `path` could not be read or written: "is a folder", "a parent is a file",
    /// the POSIX reason ("Permission denied"), or a plain fallback.
    public static func reason(_ error: Error, path: String? = nil) -> String {
        if let path {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
                return "it is a folder, not a file"
            }
            // Creating `a/b/c` where `a/b` is a file.
            var parent = URL(fileURLWithPath: path).deletingLastPathComponent()
            while parent.path != "/" && !FileManager.default.fileExists(atPath: parent.path) {
                parent = parent.deletingLastPathComponent()
            }
            if FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                return "\(parent.path) is a file, not a folder"
            }
        }
        let ns = error as NSError
        if ns.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(ns.code))) }
        if let underlying = ns.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if ns.domain == NSCocoaErrorDomain {
            switch ns.code {
            case NSFileReadNoSuchFileError, NSFileNoSuchFileError: return "No such file or directory"
            case NSFileReadNoPermissionError, NSFileWriteNoPermissionError: return "Permission denied"
            case NSFileWriteOutOfSpaceError: return "No space left on device"
            case NSFileWriteVolumeReadOnlyError: return "Read-only file system"
            case NSFileWriteFileExistsError: return "File exists"
            case NSFileReadInapplicableStringEncodingError: return "it is not text in a known encoding"
            default: return "the file system refused (code \(ns.code))"
            }
        }
        return "\(error)"
    }
}

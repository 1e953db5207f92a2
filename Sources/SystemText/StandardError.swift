#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Text to stderr with `write(2)`: no `Data` or `FileHandle` (whose generic `Data`
/// initializer costs a dynamic cast and a conformance scan the first time, at start-up).
public enum StandardError {
    /// Writes all of `text`'s UTF-8 bytes, retrying short writes and EINTR; gives up
    /// silently on any other error (stderr closed: nowhere left to say it).
    public static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(2, bytes.baseAddress! + offset, bytes.count - offset)
                if n > 0 { offset += n } else if n < 0 && errno == EINTR { continue } else { return }
            }
        }
    }
}

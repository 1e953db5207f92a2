import Foundation
import SystemText
import SHA256Kit

/// SHA-256 digests as lowercase hex: recipe digests, body digests and idempotency keys
/// (one SHA-256 for the whole program: `SHA256Kit`).
public enum Digest {
    /// The SHA-256 of `data` as 64 lowercase hex characters.
    public static func sha256Hex(_ data: Data) -> String {
        Hex.encode(data.withUnsafeBytes { SHA256.digest($0) })
    }

    /// The SHA-256 of the UTF-8 bytes of `text`.
    public static func sha256Hex(_ text: String) -> String {
        var text = text   // its bytes in place: no `Data` (a dynamic cast at its first use)
        return Hex.encode(text.withUTF8 { SHA256.digest(UnsafeRawBufferPointer($0)) })
    }
}

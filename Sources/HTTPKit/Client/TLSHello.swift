/// The first flight of a TLS client, and what the first bytes a server sends back to it
/// say about the server: whether it speaks TLS at all.
///
/// Used by ``TCPConnectProbe`` before an HTTPS exchange: a server that speaks plain
/// HTTP on the port an `https://` URL names never completes a TLS handshake, and the
/// HTTP stack underneath (libcurl) would wait for one until its idle timeout.
public enum TLSHello {
    /// A well-formed TLS ClientHello record offering TLS 1.3 and 1.2 (AEAD suites only,
    /// no key share, so a TLS 1.3 server answers with a HelloRetryRequest and spends no
    /// key exchange on it). `serverName` goes into SNI (without a trailing dot) unless it
    /// is an IP literal or longer than 255 bytes.
    /// `random` must be 32 bytes.
    public static func clientHello(serverName: String?, random: [UInt8]) -> [UInt8] {
        precondition(random.count == 32, "the ClientHello random is 32 bytes")
        var extensions: [UInt8] = []
        let name = serverName.map { $0.hasSuffix(".") ? String($0.dropLast()) : $0 } ?? ""   // SNI has no trailing dot
        if !isIPLiteral(name), !name.isEmpty, name.utf8.count < 256 {
            let host = Array(name.utf8)
            extensions += ext(0x0000, u16(host.count + 3) + [0x00] + u16(host.count) + host)   // server_name
        }
        extensions += ext(0x000a, list16([0x001d, 0x0017, 0x0018]))                   // supported_groups
        extensions += ext(0x000b, [0x01, 0x00])                                       // ec_point_formats
        extensions += ext(0x000d, list16([0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601]))
        extensions += ext(0x002b, [0x04, 0x03, 0x04, 0x03, 0x03])                     // supported_versions 1.3, 1.2
        extensions += ext(0x0033, u16(0))                                             // key_share: none yet
        let suites: [UInt16] = [0x1301, 0x1302, 0x1303, 0xC02B, 0xC02F, 0xC02C, 0xC030, 0xCCA9, 0xCCA8]
        var body: [UInt8] = [0x03, 0x03] + random + [0x00]                           // legacy version, random, no session id
        body += list16(suites)
        body += [0x01, 0x00]                                                          // compression: null only
        body += u16(extensions.count) + extensions
        let handshake: [UInt8] = [0x01] + u24(body.count) + body                      // ClientHello
        return [0x16, 0x03, 0x01] + u16(handshake.count) + handshake                  // handshake record
    }

    /// What a server's first bytes after a ClientHello say.
    public enum Answer: Equatable, Sendable {
        /// A TLS record (a ServerHello, a HelloRetryRequest or an alert): the server speaks TLS.
        case tls
        /// An HTTP/1.x response: the server speaks plain HTTP on this port. Carries its status line.
        case plainHTTP(statusLine: String)
        /// Something else; carries the bytes shown printable (at most 40 characters).
        case other(preview: String)
    }

    /// Classifies the first bytes a server sent; nil while more bytes are needed to
    /// tell (fewer than 5 and the stream has not `ended`). Empty bytes are never classified.
    public static func classify(_ bytes: [UInt8], ended: Bool) -> Answer? {
        guard let first = bytes.first else { return nil }
        if (0x14...0x17).contains(first), bytes.count < 2 || bytes[1] == 0x03 {
            return bytes.count >= 2 || ended ? .tls : nil
        }
        let http = Array("HTTP/".utf8)
        if bytes.count < http.count && !ended && bytes == Array(http.prefix(bytes.count)) { return nil }
        if bytes.starts(with: http) {
            let line = bytes.prefix { $0 != 13 && $0 != 10 }
            return .plainHTTP(statusLine: printable(Array(line.prefix(80)), limit: 80))
        }
        return .other(preview: printable(bytes, limit: 40))
    }

    /// Whether `bytes` open a TLS record (handshake or alert from a TLS server): for a
    /// plain-HTTP client that got TLS back.
    public static func looksLikeTLS(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        guard let first = iterator.next(), first == 0x15 || first == 0x16 else { return false }
        guard let second = iterator.next() else { return true }
        return second == 0x03
    }

    /// The bytes as text, anything outside printable ASCII shown as `.`, cut at `limit`.
    static func printable(_ bytes: [UInt8], limit: Int) -> String {
        String(decoding: bytes.prefix(limit).map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: ".") }, as: UTF8.self)
    }

    /// Whether `host` is an IPv4 or IPv6 literal (SNI carries only DNS names).
    static func isIPLiteral(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    private static func u16(_ n: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)] }
    private static func u24(_ n: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: n >> 16)] + u16(n) }
    private static func list16(_ values: [UInt16]) -> [UInt8] {
        u16(values.count * 2) + values.flatMap { u16(Int($0)) }
    }
    private static func ext(_ type: UInt16, _ data: [UInt8]) -> [UInt8] { u16(Int(type)) + u16(data.count) + data }
}

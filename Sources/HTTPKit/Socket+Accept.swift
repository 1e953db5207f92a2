#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Accepting a connection, with its peer's address.
extension Socket {
    /// What ``accept(_:)`` produced.
    enum Accepted {
        /// A connection and its peer's address (the address only, no port: the key
        /// per-address limits count by).
        case connection(Int32, peer: String)
        /// Nothing to accept right now, or a transient failure: poll again.
        case retry
        /// The process (`EMFILE`) or the system (`ENFILE`) is out of descriptors.
        case outOfDescriptors
        /// Out of memory or buffers: back off before polling again.
        case backOff
    }

    /// Accepts one pending connection as a blocking, close-on-exec descriptor.
    static func accept(_ listener: Int32) -> Accepted {
        // accept4(2) and pipe2(2) are not exported by the Glibc module, so close-on-exec
        // is set right after; a fork in that instant could inherit the descriptor.
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let fd = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { cAccept(listener, $0, &length) }
        }
        if fd >= 0 {
            setCloseOnExec(fd)
            return .connection(fd, peer: addressText(&storage))
        }
        switch errno {
        case EMFILE, ENFILE: return .outOfDescriptors
        case ENOBUFS, ENOMEM: return .backOff
        default: return .retry
        }
    }

    /// The numeric text of the address in `storage` ("127.0.0.2", "::1"); an IPv4
    /// address mapped into IPv6 is shown as IPv4, so both count as one client.
    private static func addressText(_ storage: inout sockaddr_storage) -> String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = Int32(storage.ss_family)
        withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var address = sin.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                }
            } else if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var address = sin6.pointee.sin6_addr
                    let bytes = withUnsafeBytes(of: &address) { Array($0) }
                    if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                        var v4 = in_addr()
                        withUnsafeMutableBytes(of: &v4) { raw in for i in 0..<4 { raw[i] = bytes[12 + i] } }
                        _ = inet_ntop(AF_INET, &v4, &text, socklen_t(text.count))
                    } else {
                        _ = inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                    }
                }
            }
        }
        let result = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return result.isEmpty ? "unknown" : result
    }
}

// A free function, so the name does not resolve to `Socket`'s own member.
#if canImport(Glibc)
private func cAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    Glibc.accept(fd, address, length)
}
#else
private func cAccept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
    Darwin.accept(fd, address, length)
}
#endif

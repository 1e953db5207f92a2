import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `count` loopback connections that each send one byte a second, from `addresses`
/// source addresses (127.0.0.2 on). Even-numbered ones trickle a request head (a
/// header value that never ends), odd-numbered ones a body (a complete head declaring
/// 100,000 bytes). A connection the server answers or closes is reopened a second later.
/// One thread drives them all with poll(2); it stops at ``stop()`` or after the time
/// given to ``start(for:)``, whichever comes first, and closes every socket.
final class Trickle: Sendable {
    private struct Slot { var fd: Int32 = -1; var reopenAt: Double = 0; var lastByte: Double = 0 }
    /// The connections, what the server did to each that ended, and whether to stop.
    private struct Lanes {
        var slots: [Slot]
        var outcomes: [String: Int] = [:]
        var stopping = false
    }

    private let port: UInt16
    private let count: Int
    private let addresses: Int
    private let lanes: Mutex<Lanes>
    private let finished = DispatchSemaphore(value: 0)

    init(port: UInt16, count: Int, addresses: Int) {
        self.port = port
        self.count = count
        self.addresses = max(1, addresses)
        lanes = Mutex(Lanes(slots: Array(repeating: Slot(), count: count)))
    }

    /// Starts the driving thread, which ends by itself after `seconds`.
    func start(for seconds: Double) {
        Thread.detachNewThread { [self] in
            drive(until: Senders.now() + seconds)
            finished.signal()
        }
    }

    /// The connections open now.
    var openCount: Int { lanes.withLock { $0.slots.filter { $0.fd >= 0 }.count } }

    /// Stops the trickle, closes its sockets, and returns what the server did to them.
    func stop() -> [String: Int] {
        lanes.withLock { $0.stopping = true }
        finished.wait()
        return lanes.withLock { $0.outcomes }
    }

    private func drive(until end: Double) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = Senders.now()
            // One byte a second on each connection (reopening those that ended), then
            // the sockets to watch; nil when it is time to stop.
            let watched: [pollfd]? = lanes.withLock { lanes in
                if lanes.stopping || now >= end { return nil }
                for index in lanes.slots.indices {
                    if lanes.slots[index].fd < 0, now >= lanes.slots[index].reopenAt { open(index, now: now, &lanes) }
                    if lanes.slots[index].fd >= 0, now - lanes.slots[index].lastByte >= 1 {
                        var byte: UInt8 = UInt8(ascii: index % 2 == 0 ? "a" : "x")
                        if send(lanes.slots[index].fd, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 {
                            lanes.slots[index].lastByte = now
                        } else if errno != EAGAIN {
                            Self.ended(index, as: "send failed", now: now, &lanes)
                        }
                    }
                }
                return lanes.slots.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            }
            guard var fds = watched else { break }
            guard poll(&fds, nfds_t(fds.count), 100) >= 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.fd >= 0 && entry.revents != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    let text = String(decoding: buffer[0..<min(n, 12)], as: UTF8.self)
                    let outcome = text.hasPrefix("HTTP/1.1 ") ? String(text.dropFirst(9).prefix(3)) : "other bytes"
                    lanes.withLock { Self.ended(index, as: outcome, now: Senders.now(), &$0) }
                } else if n == 0 || errno != EAGAIN {
                    lanes.withLock { Self.ended(index, as: "closed", now: Senders.now(), &$0) }
                }
            }
        }
        lanes.withLock { lanes in
            for index in lanes.slots.indices where lanes.slots[index].fd >= 0 {
                close(lanes.slots[index].fd)
                lanes.slots[index].fd = -1
            }
        }
    }

    private func open(_ index: Int, now: Double, _ lanes: inout Lanes) {
        let source = "127.0.0.\(2 + index % addresses)"
        guard let fd = connectSocket(port: port, from: source, blocking: false) else {
            lanes.slots[index].reopenAt = now + 1
            lanes.outcomes["connect failed", default: 0] += 1
            return
        }
        let start = index % 2 == 0
            ? "POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle: "
            : "POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
        // Loopback connects at once; if not yet, the first second's byte goes later.
        _ = Array(start.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        lanes.slots[index] = Slot(fd: fd, reopenAt: 0, lastByte: now)
    }

    private static func ended(_ index: Int, as outcome: String, now: Double, _ lanes: inout Lanes) {
        close(lanes.slots[index].fd)
        lanes.slots[index] = Slot(fd: -1, reopenAt: now + 1, lastByte: 0)
        lanes.outcomes[outcome, default: 0] += 1
    }
}

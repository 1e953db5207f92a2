import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `count` loopback connections that each send one byte a second, from `addresses`
/// source addresses (127.0.0.2 on). Even-numbered ones trickle a request head (a
/// header value that never ends), odd-numbered ones a body (a complete head declaring
/// 100,000 bytes). A connection the server answers or closes is reopened a second later.
/// One thread drives them all with poll(2); it stops at ``stop()`` or after the time
/// given to ``start(for:)``, whichever comes first, and closes every socket.
final class Trickle: @unchecked Sendable {
    private struct Slot { var fd: Int32 = -1; var reopenAt: Double = 0; var lastByte: Double = 0 }

    private let port: UInt16
    private let count: Int
    private let addresses: Int
    private let lock = NSLock()
    private var slots: [Slot]
    private var outcomes: [String: Int] = [:]
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)

    init(port: UInt16, count: Int, addresses: Int) {
        self.port = port
        self.count = count
        self.addresses = max(1, addresses)
        slots = Array(repeating: Slot(), count: count)
    }

    /// Starts the driving thread, which ends by itself after `seconds`.
    func start(for seconds: Double) {
        Thread.detachNewThread { [self] in
            drive(until: Senders.now() + seconds)
            finished.signal()
        }
    }

    /// The connections open now.
    var openCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return slots.filter { $0.fd >= 0 }.count
    }

    /// Stops the trickle, closes its sockets, and returns what the server did to them.
    func stop() -> [String: Int] {
        lock.lock()
        stopping = true
        lock.unlock()
        finished.wait()
        return outcomes
    }

    private func drive(until end: Double) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let now = Senders.now()
            lock.lock()
            let done = stopping || now >= end
            lock.unlock()
            if done { break }
            for index in slots.indices {
                if slots[index].fd < 0, now >= slots[index].reopenAt { open(index, now: now) }
                if slots[index].fd >= 0, now - slots[index].lastByte >= 1 {
                    var byte: UInt8 = UInt8(ascii: index % 2 == 0 ? "a" : "x")
                    if send(slots[index].fd, &byte, 1, Int32(MSG_NOSIGNAL)) == 1 {
                        slots[index].lastByte = now
                    } else if errno != EAGAIN {
                        ended(index, as: "send failed", now: now)
                    }
                }
            }
            var fds = slots.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            guard poll(&fds, nfds_t(fds.count), 100) >= 0 else { continue }
            for (index, entry) in fds.enumerated() where entry.fd >= 0 && entry.revents != 0 {
                let n = buffer.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, 0) }
                if n > 0 {
                    let text = String(decoding: buffer[0..<min(n, 12)], as: UTF8.self)
                    ended(index, as: text.hasPrefix("HTTP/1.1 ") ? String(text.dropFirst(9).prefix(3)) : "other bytes", now: Senders.now())
                } else if n == 0 || errno != EAGAIN {
                    ended(index, as: "closed", now: Senders.now())
                }
            }
        }
        lock.lock()
        for index in slots.indices where slots[index].fd >= 0 { close(slots[index].fd); slots[index].fd = -1 }
        lock.unlock()
    }

    private func open(_ index: Int, now: Double) {
        let source = "127.0.0.\(2 + index % addresses)"
        guard let fd = connectSocket(port: port, from: source, blocking: false) else {
            slots[index].reopenAt = now + 1
            outcomes["connect failed", default: 0] += 1
            return
        }
        let start = index % 2 == 0
            ? "POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Trickle: "
            : "POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
        // Loopback connects at once; if not yet, the first second's byte goes later.
        _ = Array(start.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        lock.lock()
        slots[index] = Slot(fd: fd, reopenAt: 0, lastByte: now)
        lock.unlock()
    }

    private func ended(_ index: Int, as outcome: String, now: Double) {
        lock.lock()
        close(slots[index].fd)
        slots[index] = Slot(fd: -1, reopenAt: now + 1, lastByte: 0)
        outcomes[outcome, default: 0] += 1
        lock.unlock()
    }
}

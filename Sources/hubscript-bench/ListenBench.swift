// scripts/bench-listen: correctly signed webhook deliveries to `hubscript listen`, alone
// and while up to TRICKLERS loopback connections (from 127.0.0.2 … 127.0.0.{ADDRESSES+1})
// send one byte a second: half of them a request head, half a body. Prints
//   - acknowledged (202) deliveries per second and the p50/p99/max acknowledgement time
//     with 64 concurrent senders (keep-alive connections from 127.0.0.1), without and
//     with the trickle, side by side;
//   - the answer time of single deliveries on a new connection during the trickle;
//   - what the trickling connections got (408/429/503, closed) and how many were open.
// The trickle is bounded (TRICKLERS connections, reopened a second after each refusal)
// and stops by itself when the measurement ends.
import Foundation
import Synchronization
import HTTPKit
#if canImport(Glibc)
import Glibc
#endif

enum ListenBench {
    static func run(port: UInt16, secret: String, tricklers: Int, addresses: Int, seconds: Double) {
        let quiet = Senders.measure(port: port, secret: secret, senders: 64, seconds: seconds, tag: "quiet")
        let quietPaced = Senders.measure(port: port, secret: secret, senders: 64, seconds: seconds, tag: "quietpaced", rate: 500)
        let trickle = Trickle(port: port, count: tricklers, addresses: addresses)
        trickle.start(for: seconds * 3 + 30)
        Thread.sleep(forTimeInterval: 3)   // every slot taken, the refused reconnecting
        var singles: [Double] = []
        for n in 0..<10 {
            singles.append(Senders.single(port: port, secret: secret, id: "wev_bench_single_\(n)_\(UInt32.random(in: 0...UInt32.max))"))
            Thread.sleep(forTimeInterval: 0.3)
        }
        let open = trickle.openCount
        let busy = Senders.measure(port: port, secret: secret, senders: 64, seconds: seconds, tag: "trickle")
        let busyPaced = Senders.measure(port: port, secret: secret, senders: 64, seconds: seconds, tag: "tricklepaced", rate: 500)
        let outcomes = trickle.stop()

        func ms(_ s: Double) -> String { String(format: "%.1f ms", s * 1000) }
        func table(_ title: String, _ a: Senders.Result, _ b: Senders.Result) {
            print(title)
            print(String(format: "  acknowledged deliveries / s       %10.0f         %10.0f   (ratio %.2f)",
                         a.perSecond, b.perSecond, b.perSecond / max(1, a.perSecond)))
            print("  p50 acknowledgement               \(pad(ms(a.p50)))         \(pad(ms(b.p50)))")
            print("  p99 acknowledgement               \(pad(ms(a.p99)))         \(pad(ms(b.p99)))")
            print("  max acknowledgement               \(pad(ms(a.max)))         \(pad(ms(b.max)))")
            print("  refused or failed, then retried   \(pad(String(a.failures)))         \(pad(String(b.failures)))")
        }
        print("64 senders, \(Int(seconds)) s a phase                 without trickle    with \(tricklers) trickling")
        table("as fast as answered (keep-alive):", quiet, busy)
        table("500 a second offered, on a schedule:", quietPaced, busyPaced)
        let valid = singles.filter { $0 >= 0 }.sorted()
        let median = valid.isEmpty ? -1 : valid[valid.count / 2]
        print("single deliveries on a new connection during the trickle: \(valid.count) of \(singles.count) answered 202, "
              + "slowest \(ms(valid.last ?? -1)), median \(ms(median))")
        print("trickling connections open at the first single delivery: \(open) of \(tricklers); "
              + "what they got: " + outcomes.sorted { $0.key < $1.key }.map { "\($0.key) × \($0.value)" }.joined(separator: ", "))
    }

    private static func pad(_ s: String) -> String { String(repeating: " ", count: max(0, 10 - s.count)) + s }
}

/// Signed deliveries over keep-alive connections.
enum Senders {
    struct Result { var perSecond: Double; var p50: Double; var p99: Double; var max: Double; var failures: Int }

    static func body(id: String) -> Data {
        Data(#"{"id":"\#(id)","type":"user.suspended","api_version":"2026-10-05","created_at":"2026-12-01T00:00:00Z","application_id":null,"test_mode":true,"data":{"user_id":"usr_bench"}}"#.utf8)
    }

    static func request(secret: String, id: String) -> [UInt8] {
        let payload = body(id: id)
        let signature = WebhookSignature.header(secrets: [secret], timestamp: Int(Date().timeIntervalSince1970), body: payload)
        let head = "POST /hooks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Substratal-Signature: \(signature)\r\nSubstratal-Event-Id: \(id)\r\nContent-Length: \(payload.count)\r\n\r\n"
        return Array(head.utf8) + Array(payload)
    }

    /// `senders` threads delivering events for `seconds`: one after another as fast as
    /// the answers come (`rate` nil), or together `rate` a second on a fixed schedule,
    /// each time measured from its scheduled instant (so a late answer delays the
    /// next one's measure too, not only its own). A refused connection (429/503) waits
    /// the server's Retry-After (1 s) before it reconnects, as a webhook sender would.
    static func measure(port: UInt16, secret: String, senders: Int, seconds: Double, tag: String,
                        rate: Double? = nil) -> Result {
        let collected = Collected()
        let run = UInt32.random(in: 0...UInt32.max)
        let start = now()
        let group = DispatchGroup()
        // One thread per sender (concurrentPerform would run only as many as there are cores).
        for index in 0..<senders {
            group.enter()
            Thread.detachNewThread {
                var mine: [Double] = []
                var failed = 0
                var connection: Wire?
                var n = 0
                while now() - start < seconds {
                    var t0 = now()
                    if let rate {
                        // This sender's n-th slot of the shared schedule.
                        let slot = start + (Double(n * senders + index)) / rate
                        if slot > t0 { Thread.sleep(forTimeInterval: slot - t0) }
                        t0 = slot
                        if t0 - start >= seconds { break }
                    }
                    if connection == nil { connection = Wire(port: port, from: "127.0.0.1") }
                    guard let wire = connection else { failed += 1; Thread.sleep(forTimeInterval: 0.01); continue }
                    n += 1
                    let status = wire.exchange(request(secret: secret, id: "wev_\(tag)_\(run)_\(index)_\(n)"))
                    if status == 202 { mine.append(now() - t0) } else { failed += 1 }
                    if status == nil || wire.closed { connection = nil }
                    if status == 429 || status == 503 { Thread.sleep(forTimeInterval: 1) }
                }
                collected.add(mine, failed: failed)
                group.leave()
            }
        }
        group.wait()
        var latencies = collected.latencies
        let failures = collected.failures
        let elapsed = now() - start
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            latencies.isEmpty ? -1 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))]
        }
        return Result(perSecond: Double(latencies.count) / elapsed, p50: percentile(0.5), p99: percentile(0.99),
                      max: latencies.last ?? -1, failures: failures)
    }

    /// One delivery on a new connection from 127.0.0.1: seconds until its 202 (-1: another answer).
    static func single(port: UInt16, secret: String, id: String) -> Double {
        let t0 = now()
        guard let wire = Wire(port: port, from: "127.0.0.1") else { return -1 }
        let status = wire.exchange(request(secret: secret, id: id))
        if status != 202 {
            FileHandle.standardError.write(Data("single delivery: answered \(status.map(String.init) ?? "nothing") \(wire.lastBody)\n".utf8))
        }
        return status == 202 ? now() - t0 : -1
    }

    static func now() -> Double { ProcessInfo.processInfo.systemUptime }
}

/// What the sender threads measured.
final class Collected: Sendable {
    private let measured = Mutex<(latencies: [Double], failures: Int)>(([], 0))

    var latencies: [Double] { measured.withLock { $0.latencies } }
    var failures: Int { measured.withLock { $0.failures } }

    func add(_ more: [Double], failed: Int) {
        measured.withLock {
            $0.latencies += more
            $0.failures += failed
        }
    }
}

/// A blocking client connection that sends a request and reads its response.
final class Wire {
    let fd: Int32
    private(set) var closed = false
    /// The body of the last response read.
    private(set) var lastBody = ""
    private var pending: [UInt8] = []

    init?(port: UInt16, from source: String, timeout: Int = 10) {
        guard let fd = connectSocket(port: port, from: source, blocking: true) else { return nil }
        self.fd = fd
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends `bytes`, reads one response; its status, nil if the connection failed.
    func exchange(_ bytes: [UInt8]) -> Int? {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { closed = true; return nil }
            offset += n
        }
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if let end = headEnd() {
                let head = String(decoding: pending[0..<end], as: UTF8.self)
                let status = Int(head.dropFirst(9).prefix(3)) ?? 0
                let length = head.lowercased().components(separatedBy: "\r\n")
                    .first { $0.hasPrefix("content-length:") }.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
                if pending.count >= end + length {
                    lastBody = String(decoding: pending[end..<(end + length)], as: UTF8.self)
                    pending.removeFirst(end + length)
                    if head.lowercased().contains("connection: close") { closed = true }
                    return status
                }
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { closed = true; return nil }
            pending += buffer[0..<n]
        }
    }

    private func headEnd() -> Int? {
        guard pending.count >= 4 else { return nil }
        for i in 0...(pending.count - 4) where pending[i] == 13 && pending[i + 1] == 10 && pending[i + 2] == 13 && pending[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}

/// Connects a TCP socket from loopback address `source` to 127.0.0.1:`port`.
func connectSocket(port: UInt16, from source: String, blocking: Bool) -> Int32? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_addr.s_addr = inet_addr(source)
    var remote = sockaddr_in()
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = port.bigEndian
    remote.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if !blocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
    let connected = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0, connected == 0 || errno == EINPROGRESS else {
        close(fd)
        return nil
    }
    return fd
}

import Foundation
import SystemText
import ScriptHost

/// Draws one line for the recipe on stderr, redrawn in place with `\r`:
/// `label  42% 420/1000  85.3/s  ETA 0:07  [0:05]` (without a total:
/// `label 420  85.3/s  [0:05]`; the bracket is the bar's elapsed time).
///
/// One line, whatever the recipe does: its own `progress(…)` bars win over the lists
/// the `hub` module reads (ids from `listBarIDs`), and the bar drawn is the latest
/// updated. A finished bar's line is erased, not left behind; another bar still
/// running shows again at its next update. Call `endLine()` when the run ends, so a
/// bar left unfinished is erased too, and `interject(_:)` to print a line of text
/// (a notice) without it running into the bar.
///
/// `countdown(seconds:text:)` takes the line for a wait (a rate limit): its text with
/// the whole seconds left, redrawn each second and erased when the wait is over; bars
/// wait for it.
///
/// Draws only when stderr is a terminal (`isatty(2)`), and otherwise nothing at all.
/// Redraws at most every `interval` seconds (0.1 s: ~10 per second).
/// The clock and the sink are injectable for tests.
public final class TerminalProgressReporter: ProgressReporter, @unchecked Sendable {
    public let isEnabled: Bool
    public let interval: Double
    /// Bars with ids from here are the `hub` module's list reads.
    public static let listBarIDs = 1_000_000
    private let clock: @Sendable () -> Double
    private let sink: @Sendable (String) -> Void
    private let lock = NSLock()
    private var startTimes: [Int: Double] = [:]
    private var lastDraw = -Double.infinity
    private var lineOpen = false
    /// The bar on the line, while `lineOpen`.
    private var shownID: Int?
    /// The recipe's own bars that are running.
    private var recipeBars: Set<Int> = []
    /// The wait on the line (`countdown`): when it ends (`clock`), its text, and a
    /// generation that tells its ticking thread whether it is still the current one.
    private var wait: (until: Double, text: @Sendable (Int) -> String, generation: Int)?
    private var waitGeneration = 0

    public init(isEnabled: Bool = isatty(2) == 1, interval: Double = 0.1,
                clock: @escaping @Sendable () -> Double = { MonotonicTime.seconds() },
                sink: @escaping @Sendable (String) -> Void = TerminalProgressReporter.writeStderr) {
        self.isEnabled = isEnabled
        self.interval = interval
        self.clock = clock
        self.sink = sink
    }

    public func started(_ bar: ProgressState) {
        guard isEnabled else { return }
        lock.withLock {
            startTimes[bar.id] = clock()
            if bar.id < Self.listBarIDs { recipeBars.insert(bar.id) }
            drawLocked(bar, force: true)
        }
    }

    public func advanced(_ bar: ProgressState) {
        guard isEnabled else { return }
        lock.withLock { drawLocked(bar, force: false) }
    }

    public func finished(_ bar: ProgressState) {
        guard isEnabled else { return }
        lock.withLock {
            guard startTimes.removeValue(forKey: bar.id) != nil else { return }
            recipeBars.remove(bar.id)
            // Only the bar on the line is erased (a list read under the recipe's bar
            // ends without a flicker).
            guard shownID == bar.id else { return }
            eraseLocked()
            lastDraw = -Double.infinity   // the next update of a bar still running draws
        }
    }

    /// Erases a line left by an unfinished bar (or a wait).
    public func endLine() {
        lock.withLock {
            wait = nil
            eraseLocked()
        }
    }

    /// Shows `text(n)` — `n` the whole seconds left of a wait of `seconds` — in place of
    /// the bar, redrawn each second until the wait is over, then erased (a bar still
    /// running shows again at its next update). A wait that ends later replaces one on
    /// the line; one that ends sooner is already covered by it.
    public func countdown(seconds: Double, text: @escaping @Sendable (Int) -> String) {
        guard isEnabled, seconds > 0 else { return }
        let generation: Int? = lock.withLock {
            let until = clock() + seconds
            if let wait, wait.until >= until { return nil }
            waitGeneration += 1
            wait = (until, text, waitGeneration)
            drawWaitLocked()
            return waitGeneration
        }
        guard let generation else { return }
        let ticker = Thread { [self] in tick(generation) }
        ticker.start()
    }

    /// Redraws the wait `generation` at each whole second left; erases it at its end.
    private func tick(_ generation: Int) {
        while true {
            // Sleep to the next whole second left (or to the end).
            let pause: Double? = lock.withLock {
                guard let wait, wait.generation == generation else { return nil }
                let left = wait.until - clock()
                let fraction = left - left.rounded(.down)
                return max(0, fraction > 0.001 ? fraction : min(1, left))
            }
            guard let pause else { return }
            Thread.sleep(forTimeInterval: pause)
            let over: Bool = lock.withLock {
                guard let wait, wait.generation == generation else { return true }
                guard wait.until - clock() > 0.001 else {
                    self.wait = nil
                    eraseLocked()
                    lastDraw = -Double.infinity
                    return true
                }
                drawWaitLocked()
                return false
            }
            if over { return }
        }
    }

    private func drawWaitLocked() {
        guard let wait else { return }
        let left = Int(max(0, wait.until - clock()).rounded(.up))
        lineOpen = true
        shownID = nil
        sink("\r" + TerminalText.line(wait.text(max(1, left))) + "\u{1B}[K")
    }

    /// Writes `text` and a line break on stderr, erasing the bar first (it is drawn
    /// again at its next update). Without a terminal, just writes the line.
    public func interject(_ text: String) {
        lock.withLock {
            eraseLocked()
            lastDraw = -Double.infinity
            sink(text + "\n")
            drawWaitLocked()   // a wait on the line stays on it
        }
    }

    private func eraseLocked() {
        if lineOpen { sink("\r\u{1B}[K") }
        lineOpen = false
        shownID = nil
    }

    private func drawLocked(_ bar: ProgressState, force: Bool) {
        // A wait keeps the line until it is over.
        if wait != nil { return }
        // A list read does not take the line from the recipe's own bar.
        if bar.id >= Self.listBarIDs && !recipeBars.isEmpty { return }
        guard startTimes[bar.id] != nil else { return }
        let now = clock()
        guard force || now - lastDraw >= interval else { return }
        lastDraw = now
        lineOpen = true
        shownID = bar.id
        sink("\r" + Self.line(for: bar, elapsed: now - (startTimes[bar.id] ?? now)) + "\u{1B}[K")
    }

    /// The text of one bar (no `\r`), e.g. `import  42% 420/1000  85.3/s  ETA 0:07  [0:05]`.
    /// Control characters and bidi controls in the label (`TerminalText.isControl`)
    /// show as `?`, so a label cannot move the cursor, send escape sequences to the
    /// terminal or reorder the line; the redrawn line stays one short line.
    public static func line(for bar: ProgressState, elapsed: Double) -> String {
        var parts: [String] = []
        if !bar.label.isEmpty {
            parts.append(String(String.UnicodeScalarView(bar.label.unicodeScalars.map {
                TerminalText.isControl($0) ? "?" : $0
            })))
        }
        let rate = elapsed > 0 ? Double(bar.count) / elapsed : nil
        if let total = bar.total, total > 0 {
            let percent = min(100, Int(Double(bar.count) * 100 / Double(total)))
            parts.append("\(String(percent).leftPadded(to: 3, with: " "))% \(bar.count)/\(total)")
        } else {
            parts.append("\(bar.count)")
        }
        if let rate { parts.append(String(format: "%.1f/s", rate)) }
        if let total = bar.total, let rate, rate > 0, !bar.isDone, bar.count < total {
            parts.append("ETA " + formatDuration(Double(total - bar.count) / rate))
        }
        if bar.isDone { parts.append("done") }
        if elapsed >= 1 { parts.append("[" + formatDuration(elapsed.rounded(.down)) + "]") }
        return parts.joined(separator: "  ")
    }

    /// `m:ss`, or `h:mm:ss` from an hour.
    static func formatDuration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let (h, m, sec) = (s / 3600, s / 60 % 60, s % 60)
        let ss = String(sec).leftPadded(to: 2)
        return h > 0 ? "\(h):\(String(m).leftPadded(to: 2)):\(ss)" : "\(m):\(ss)"
    }

    /// Writes the progress line to stderr, loaded secrets masked (`SecretRedactor`).
    public static let writeStderr: @Sendable (String) -> Void = { text in
        var bytes = Array(SecretRedactor.shared.redact(text).utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return }
            offset += n
        }
    }
}

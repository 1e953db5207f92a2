import Foundation
import SystemText
import ScriptHost
import Synchronization

/// Draws one line for the recipe on stderr, redrawn in place with `\r`:
/// `label  42% 420/1000  85.3/s  ETA 0:07  [0:05]` (without a total:
/// `label 420  85.3/s  [0:05]`; the bracket is the bar's elapsed time).
///
/// One line, whatever the recipe does: its own `progress(…)` bars win over the lists
/// the `hub` module reads (ids from `listBarIDs`), and the bar drawn is the latest
/// updated. A finished bar's line is erased, not left behind; another bar still
/// running shows again at its next update. Call `endLine()` when the run ends, so a
/// bar left unfinished is erased too, and `interject(_:)` to print a line of text
/// (a notice) without it running into the bar. The run's console writes its lines
/// inside `clearing(_:)` (`TerminalLineSharing`): the line is erased, the text written,
/// and the line drawn again as it was, so a recipe's `print` never lands on the bar.
///
/// `countdown(seconds:text:)` takes the line for a wait (a rate limit): its text with
/// the whole seconds left, redrawn each second and erased when the wait is over; bars
/// wait for it.
///
/// Draws only when stderr is a terminal (`isatty(2)`), and otherwise nothing at all.
/// Redraws at most every `interval` seconds (0.1 s: ~10 per second).
/// The clock and the sink are injectable for tests.
public final class TerminalProgressReporter: ProgressReporter, TerminalLineSharing, Sendable {
    public let isEnabled: Bool
    public let interval: Double
    /// Bars with ids from here are the `hub` module's list reads.
    public static let listBarIDs = 1_000_000
    private let clock: @Sendable () -> Double
    private let sink: @Sendable (String) -> Void
    /// The terminal line and what is on it (guarded by its `Mutex`; the sink is
    /// called with it held, so redraws never interleave).
    private struct Line {
        var startTimes: [Int: Double] = [:]
        var lastDraw = -Double.infinity
        var lineOpen = false
        /// The bar on the line, while `lineOpen`.
        var shownID: Int?
        /// What was last drawn on the line (with its `\r` and erase-to-end), while `lineOpen`.
        var shownText = ""
        /// The recipe's own bars that are running.
        var recipeBars: Set<Int> = []
        /// The wait on the line (`countdown`): when it ends (`clock`), its text, and a
        /// generation that tells its ticking thread whether it is still the current one.
        var wait: (until: Double, text: @Sendable (Int) -> String, generation: Int)?
        var waitGeneration = 0
    }
    private let terminal = Mutex(Line())

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
        terminal.withLock { line in
            line.startTimes[bar.id] = clock()
            if bar.id < Self.listBarIDs { line.recipeBars.insert(bar.id) }
            draw(bar, force: true, on: &line)
        }
    }

    public func advanced(_ bar: ProgressState) {
        guard isEnabled else { return }
        terminal.withLock { line in draw(bar, force: false, on: &line) }
    }

    public func finished(_ bar: ProgressState) {
        guard isEnabled else { return }
        terminal.withLock { line in
            guard line.startTimes.removeValue(forKey: bar.id) != nil else { return }
            line.recipeBars.remove(bar.id)
            // Only the bar on the line is erased (a list read under the recipe's bar
            // ends without a flicker).
            guard line.shownID == bar.id else { return }
            erase(&line)
            line.lastDraw = -Double.infinity   // the next update of a bar still running draws
        }
    }

    /// Erases a line left by an unfinished bar (or a wait).
    public func endLine() {
        terminal.withLock { line in
            line.wait = nil
            erase(&line)
        }
    }

    /// Shows `text(n)` — `n` the whole seconds left of a wait of `seconds` — in place of
    /// the bar, redrawn each second until the wait is over, then erased (a bar still
    /// running shows again at its next update). A wait that ends later replaces one on
    /// the line; one that ends sooner is already covered by it.
    public func countdown(seconds: Double, text: @escaping @Sendable (Int) -> String) {
        guard isEnabled, seconds > 0 else { return }
        let generation: Int? = terminal.withLock { line in
            let until = clock() + seconds
            if let wait = line.wait, wait.until >= until { return nil }
            line.waitGeneration += 1
            line.wait = (until, text, line.waitGeneration)
            drawWait(&line)
            return line.waitGeneration
        }
        guard let generation else { return }
        let ticker = Thread { [self] in tick(generation) }
        ticker.start()
    }

    /// Redraws the wait `generation` at each whole second left; erases it at its end.
    private func tick(_ generation: Int) {
        while true {
            // Sleep to the next whole second left (or to the end).
            let pause: Double? = terminal.withLock { line in
                guard let wait = line.wait, wait.generation == generation else { return nil }
                let left = wait.until - clock()
                let fraction = left - left.rounded(.down)
                return max(0, fraction > 0.001 ? fraction : min(1, left))
            }
            guard let pause else { return }
            Thread.sleep(forTimeInterval: pause)
            let over: Bool = terminal.withLock { line in
                guard let wait = line.wait, wait.generation == generation else { return true }
                guard wait.until - clock() > 0.001 else {
                    line.wait = nil
                    erase(&line)
                    line.lastDraw = -Double.infinity
                    return true
                }
                drawWait(&line)
                return false
            }
            if over { return }
        }
    }

    private func drawWait(_ line: inout Line) {
        guard let wait = line.wait else { return }
        let left = Int(max(0, wait.until - clock()).rounded(.up))
        line.lineOpen = true
        line.shownID = nil
        line.shownText = "\r" + TerminalText.line(wait.text(max(1, left))) + "\u{1B}[K"
        sink(line.shownText)
    }

    /// Writes `text` and a line break on stderr, erasing the bar first (it is drawn
    /// again at its next update). Without a terminal, just writes the line.
    public func interject(_ text: String) {
        terminal.withLock { line in
            erase(&line)
            line.lastDraw = -Double.infinity
            sink(text + "\n")
            drawWait(&line)   // a wait on the line stays on it
        }
    }

    /// Erases the line if one is shown, runs `write`, then draws the same line again
    /// (a bar or a wait), so the text written never shares the terminal line with it.
    /// Without a terminal, just runs `write`.
    public func clearing(_ write: () -> Void) {
        guard isEnabled else { return write() }
        terminal.withLock { line in
            guard line.lineOpen else { return write() }
            let (shownID, shownText) = (line.shownID, line.shownText)
            erase(&line)
            write()
            line.lineOpen = true
            line.shownID = shownID
            line.shownText = shownText
            sink(shownText)
        }
    }

    private func erase(_ line: inout Line) {
        if line.lineOpen { sink("\r\u{1B}[K") }
        line.lineOpen = false
        line.shownID = nil
    }

    private func draw(_ bar: ProgressState, force: Bool, on line: inout Line) {
        // A wait keeps the line until it is over.
        if line.wait != nil { return }
        // A list read does not take the line from the recipe's own bar.
        if bar.id >= Self.listBarIDs && !line.recipeBars.isEmpty { return }
        guard line.startTimes[bar.id] != nil else { return }
        let now = clock()
        guard force || now - line.lastDraw >= interval else { return }
        line.lastDraw = now
        line.lineOpen = true
        line.shownID = bar.id
        line.shownText = "\r" + Self.line(for: bar, elapsed: now - (line.startTimes[bar.id] ?? now)) + "\u{1B}[K"
        sink(line.shownText)
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

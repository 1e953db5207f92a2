import Foundation
import Telemetry
import XCTest

/// Many threads count while others scrape: no update is lost and every scrape is whole.
final class MetricsRegistryConcurrencyTests: XCTestCase {
    func testConcurrentUpdatesAreAllCountedWhileScrapesRun() {
        let registry = MetricsRegistry()
        let metrics = ServiceMetrics(registry: registry, kinds: ["job"])
        let threads = 8, perThread = 5_000
        DispatchQueue.concurrentPerform(iterations: threads + 2) { index in
            if index >= threads {
                // Scrapers: each scrape parses, and every histogram's count equals its +Inf bucket.
                for _ in 0..<50 {
                    let text = registry.exposition()
                    XCTAssertTrue(text.hasSuffix("\n"))
                    let lines = text.split(separator: "\n")
                    let inf = lines.first { $0.hasPrefix("hubscript_run_duration_seconds_bucket{kind=\"job\",le=\"+Inf\"}") }
                    let count = lines.first { $0.hasPrefix("hubscript_run_duration_seconds_count{kind=\"job\"}") }
                    XCTAssertEqual(inf?.split(separator: " ").last, count?.split(separator: " ").last)
                }
                return
            }
            for i in 0..<perThread {
                metrics.recordRun(kind: "job", exitCode: Int32(i % 5), seconds: Double(i % 7), resumed: i % 2 == 0)
                metrics.recordCounts(sent: 2, replayed: 1, failed: 0, readsReplayed: 0)
                metrics.fires.increment("job\(index % 3)", "succeeded")
            }
        }
        let total = Double(threads * perThread)
        XCTAssertEqual(ServiceMetrics.outcomes.map { metrics.runs.value("job", $0) }.reduce(0, +), total)
        XCTAssertEqual(metrics.runs.value("job", "done"), total / 5)
        XCTAssertEqual(metrics.runDuration.count("job"), UInt64(total))
        XCTAssertEqual(metrics.writes.value("sent"), 2 * total)
        XCTAssertEqual(metrics.writes.value("replayed"), total)
        XCTAssertEqual(metrics.resumedRuns.value("job"), total / 2)
        XCTAssertEqual((0..<3).map { metrics.fires.value("job\($0)", "succeeded") }.reduce(0, +), total)
    }

    func testOutcomesFollowTheExitCodes() {
        XCTAssertEqual((0...6).map { ServiceMetrics.outcome(exitCode: $0) },
                       ["done", "failed", "usage", "permission", "limit", "other", "other"])
    }
}

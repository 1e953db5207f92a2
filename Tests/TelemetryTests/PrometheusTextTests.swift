import Foundation
import Telemetry
import XCTest

/// The text `/metrics` answers, byte for byte: what Prometheus (and promtool) parse.
final class PrometheusTextTests: XCTestCase {
    func testCounterGaugeAndHistogramAreWrittenExactly() {
        let registry = MetricsRegistry()
        let runs = registry.counter("app_runs_total", help: "Runs by outcome.", labels: ["outcome"])
        let depth = registry.gauge("app_queue_depth", help: "Queued items.")
        let duration = registry.histogram("app_run_duration_seconds", help: "Run time.", buckets: [1, 0.5, 10])
        runs.increment("failed")
        runs.increment("done", by: 2)
        depth.set(7)
        duration.observe(0.5)
        duration.observe(0.75)
        duration.observe(60)
        XCTAssertEqual(registry.exposition(), """
            # HELP app_runs_total Runs by outcome.
            # TYPE app_runs_total counter
            app_runs_total{outcome="done"} 2
            app_runs_total{outcome="failed"} 1
            # HELP app_queue_depth Queued items.
            # TYPE app_queue_depth gauge
            app_queue_depth 7
            # HELP app_run_duration_seconds Run time.
            # TYPE app_run_duration_seconds histogram
            app_run_duration_seconds_bucket{le="0.5"} 1
            app_run_duration_seconds_bucket{le="1"} 2
            app_run_duration_seconds_bucket{le="10"} 2
            app_run_duration_seconds_bucket{le="+Inf"} 3
            app_run_duration_seconds_sum 61.25
            app_run_duration_seconds_count 3

            """)
    }

    func testLabelValuesAndHelpAreEscapedSoNoTextLeavesItsLine() {
        let registry = MetricsRegistry()
        let fires = registry.counter("app_fires_total", help: "Fires \\ per job\nsecond line", labels: ["job", "outcome"])
        fires.increment("a\"b\\c\nd", "ok")
        fires.increment("é <script>\u{202E}", "ok")
        XCTAssertEqual(registry.exposition(), """
            # HELP app_fires_total Fires \\\\ per job\\nsecond line
            # TYPE app_fires_total counter
            app_fires_total{job="a\\"b\\\\c\\nd",outcome="ok"} 1
            app_fires_total{job="é <script>\u{202E}",outcome="ok"} 1

            """)
    }

    func testNumbersAreWrittenAsTheFormatReadsThem() {
        XCTAssertEqual(PrometheusText.number(3), "3")
        XCTAssertEqual(PrometheusText.number(-0.0), "0")
        XCTAssertEqual(PrometheusText.number(0.25), "0.25")
        XCTAssertEqual(PrometheusText.number(1e-5), "1e-05")
        XCTAssertEqual(PrometheusText.number(1e20), "1e+20")
        XCTAssertEqual(PrometheusText.number(.infinity), "+Inf")
        XCTAssertEqual(PrometheusText.number(-.infinity), "-Inf")
        XCTAssertEqual(PrometheusText.number(.nan), "NaN")
        XCTAssertEqual(PrometheusText.number(1_700_000_000.5), "1700000000.5")
    }

    func testNamesAreCheckedAsTheFormatDefinesThem() {
        for good in ["a", "_x", "a:b_c9", "hubscript_runs_total"] { XCTAssertTrue(PrometheusText.isMetricName(good), good) }
        for bad in ["", "9a", "a-b", "a b", "é", "a{"] { XCTAssertFalse(PrometheusText.isMetricName(bad), bad) }
        XCTAssertTrue(PrometheusText.isLabelName("outcome"))
        for bad in ["__name", "a:b", "", "1x"] { XCTAssertFalse(PrometheusText.isLabelName(bad), bad) }
    }

    func testAFamilyWithoutSamplesStillHasItsHelpAndType() {
        let registry = MetricsRegistry()
        _ = registry.counter("app_deliveries_total", help: "Deliveries.", labels: ["result"])
        XCTAssertEqual(registry.exposition(), "# HELP app_deliveries_total Deliveries.\n# TYPE app_deliveries_total counter\n")
    }

    func testAnInitializedLabelSetShowsZeroAndKeepsItsCount() {
        let registry = MetricsRegistry()
        let runs = registry.counter("app_runs_total", help: "Runs.", labels: ["outcome"])
        runs.initialize("failed")
        runs.increment("done")
        runs.initialize("done")
        XCTAssertEqual(registry.exposition(), """
            # HELP app_runs_total Runs.
            # TYPE app_runs_total counter
            app_runs_total{outcome="done"} 1
            app_runs_total{outcome="failed"} 0

            """)
    }

    func testRegisteringTheSameFamilyTwiceSharesIt() {
        let registry = MetricsRegistry()
        registry.counter("app_x_total", help: "X.", labels: ["k"]).increment("a")
        registry.counter("app_x_total", help: "X.", labels: ["k"]).increment("a")
        XCTAssertEqual(registry.counter("app_x_total", help: "X.", labels: ["k"]).value("a"), 2)
        XCTAssertEqual(registry.snapshot().count, 1)
    }

    func testCollectorsComeAfterTheRegisteredFamilies() {
        let registry = MetricsRegistry()
        registry.collect { [MetricFamilySnapshot(name: "app_size_bytes", help: "Size.", type: .gauge,
                                                 samples: [MetricSample(name: "app_size_bytes", value: 1024)])] }
        registry.counter("app_a_total", help: "A.").increment()
        XCTAssertEqual(registry.exposition(), """
            # HELP app_a_total A.
            # TYPE app_a_total counter
            app_a_total 1
            # HELP app_size_bytes Size.
            # TYPE app_size_bytes gauge
            app_size_bytes 1024

            """)
    }
}

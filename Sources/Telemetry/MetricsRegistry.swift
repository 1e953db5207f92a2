import Foundation
import Synchronization

/// The metrics one process serves at `GET /metrics`: counters, gauges and histograms,
/// each a family with a fixed list of label names, plus collectors that compute
/// families at scrape time (sizes read from disk or a database).
///
/// Contracts:
/// - Thread-safe: any thread may update any metric while another scrapes; a scrape
///   sees each family as it was at one instant (the family's lock), and an update is
///   never lost.
/// - A family is registered once per name; registering the same name, type and labels
///   again returns the same family (so two parts of a process can share one), anything
///   else is a programming error and stops the process.
/// - Families are exposed in the order they were registered, then the collectors' in
///   theirs; samples of a family in the order of their label values.
/// - No process-wide instance: whoever serves `/metrics` owns the registry and hands
///   it (or the metrics made on it) to what it counts.
public final class MetricsRegistry: Sendable {
    /// The families in the order registered, and the collectors in the order added.
    private struct Registered {
        var families: [MetricFamily] = []
        var collectors: [@Sendable () -> [MetricFamilySnapshot]] = []
    }
    private let registered = Mutex(Registered())

    public init() {}

    /// A counter family: values that only go up (`name` should end in `_total`).
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        Counter(family: register(name, help: help, type: .counter, labels: labels, buckets: []))
    }

    /// A gauge family: values set to what they are now.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        Gauge(family: register(name, help: help, type: .gauge, labels: labels, buckets: []))
    }

    /// A histogram family with these upper bounds (sorted; `+Inf` is added).
    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double]) -> Histogram {
        let bounds = Array(Set(buckets.filter { $0.isFinite })).sorted()
        precondition(!bounds.isEmpty, "histogram \(name) needs at least one finite bucket")
        return Histogram(family: register(name, help: help, type: .histogram, labels: labels, buckets: bounds))
    }

    /// Adds families computed at each scrape, after the registered ones. `collect` runs
    /// on the scraping thread, outside the registry's lock; it must bound its own time.
    public func collect(_ collect: @escaping @Sendable () -> [MetricFamilySnapshot]) {
        registered.withLock { $0.collectors.append(collect) }
    }

    /// Every family now.
    public func snapshot() -> [MetricFamilySnapshot] {
        let (families, extra) = registered.withLock { ($0.families, $0.collectors) }
        return families.map { $0.snapshot() } + extra.flatMap { $0() }
    }

    /// `snapshot()` in the Prometheus text format.
    public func exposition() -> String {
        PrometheusText.encode(snapshot())
    }

    private func register(_ name: String, help: String, type: MetricType, labels: [String], buckets: [Double]) -> MetricFamily {
        precondition(PrometheusText.isMetricName(name), "'\(name)' is not a metric name")
        precondition(labels.allSatisfy(PrometheusText.isLabelName) && Set(labels).count == labels.count
                     && !(type == .histogram && labels.contains("le")), "bad label names for \(name): \(labels)")
        return registered.withLock { registered in
            if let existing = registered.families.first(where: { $0.name == name }) {
                precondition(existing.type == type && existing.labelNames == labels && existing.buckets == buckets,
                             "metric \(name) registered twice with different shapes")
                return existing
            }
            let family = MetricFamily(name: name, help: help, type: type, labelNames: labels, buckets: buckets)
            registered.families.append(family)
            return family
        }
    }
}

/// One registered family and its values by label values (inside its lock).
final class MetricFamily: Sendable {
    let name: String
    let help: String
    let type: MetricType
    let labelNames: [String]
    let buckets: [Double]
    struct Recorded {
        /// Counters and gauges: the value of each label set.
        var values: [[String]: Double] = [:]
        /// Histograms: per label set, the count in each bucket (not cumulative; one more
        /// for `+Inf`), the sum and the count.
        var histograms: [[String]: (counts: [UInt64], sum: Double, count: UInt64)] = [:]
    }
    let recorded: Mutex<Recorded>

    init(name: String, help: String, type: MetricType, labelNames: [String], buckets: [Double]) {
        self.name = name
        self.help = help
        self.type = type
        self.labelNames = labelNames
        self.buckets = buckets
        var initial = Recorded()
        if labelNames.isEmpty {
            if type == .histogram { initial.histograms[[]] = (Array(repeating: 0, count: buckets.count + 1), 0, 0) } else { initial.values[[]] = 0 }
        }
        recorded = Mutex(initial)
    }

    func checkLabels(_ values: [String]) {
        precondition(values.count == labelNames.count, "\(name) takes \(labelNames.count) label values, got \(values.count)")
    }

    func snapshot() -> MetricFamilySnapshot {
        func labels(_ values: [String]) -> [(name: String, value: String)] {
            zip(labelNames, values).map { (name: $0, value: $1) }
        }
        let (values, histograms) = recorded.withLock { ($0.values, $0.histograms) }
        var samples: [MetricSample] = []
        switch type {
        case .counter, .gauge:
            for (key, value) in values.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                samples.append(MetricSample(name: name, labels: labels(key), value: value))
            }
        case .histogram:
            for (key, h) in histograms.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                var cumulative: UInt64 = 0
                for (index, count) in h.counts.enumerated() {
                    cumulative += count
                    let le = index < buckets.count ? PrometheusText.number(buckets[index]) : "+Inf"
                    samples.append(MetricSample(name: name + "_bucket", labels: labels(key) + [(name: "le", value: le)],
                                                value: Double(cumulative)))
                }
                samples.append(MetricSample(name: name + "_sum", labels: labels(key), value: h.sum))
                samples.append(MetricSample(name: name + "_count", labels: labels(key), value: Double(h.count)))
            }
        }
        return MetricFamilySnapshot(name: name, help: help, type: type, samples: samples)
    }
}

/// A counter family: `increment` adds to the value of one label set.
public struct Counter: Sendable {
    let family: MetricFamily

    /// Adds `amount` (not negative) to the counter of `labelValues` (in the order of the
    /// family's label names).
    public func increment(_ labelValues: String..., by amount: Double = 1) {
        precondition(amount >= 0, "a counter only goes up (\(family.name) by \(amount))")
        family.checkLabels(labelValues)
        family.recorded.withLock { $0.values[labelValues, default: 0] += amount }
    }

    /// Makes the label set appear with 0 before anything is counted (so a rate over it exists).
    public func initialize(_ labelValues: String...) {
        family.checkLabels(labelValues)
        family.recorded.withLock { if $0.values[labelValues] == nil { $0.values[labelValues] = 0 } }
    }

    /// The value of `labelValues` now (0 when never counted).
    public func value(_ labelValues: String...) -> Double {
        family.recorded.withLock { $0.values[labelValues] ?? 0 }
    }
}

/// A gauge family: `set` gives one label set its value now.
public struct Gauge: Sendable {
    let family: MetricFamily

    public func set(_ value: Double, _ labelValues: String...) {
        family.checkLabels(labelValues)
        family.recorded.withLock { $0.values[labelValues] = value }
    }

    public func add(_ delta: Double, _ labelValues: String...) {
        family.checkLabels(labelValues)
        family.recorded.withLock { $0.values[labelValues, default: 0] += delta }
    }

    /// Drops the label set (it is no longer exposed).
    public func remove(_ labelValues: String...) {
        family.recorded.withLock { _ = $0.values.removeValue(forKey: labelValues) }
    }

    public func value(_ labelValues: String...) -> Double? {
        family.recorded.withLock { $0.values[labelValues] }
    }
}

/// A histogram family: `observe` files one value under the first bucket that holds it.
public struct Histogram: Sendable {
    let family: MetricFamily

    /// Records `value` (NaN is ignored) for `labelValues`.
    public func observe(_ value: Double, _ labelValues: String...) {
        guard !value.isNaN else { return }
        family.checkLabels(labelValues)
        let index = family.buckets.firstIndex { value <= $0 } ?? family.buckets.count
        let slots = family.buckets.count + 1
        family.recorded.withLock { recorded in
            var h = recorded.histograms[labelValues] ?? (Array(repeating: 0, count: slots), 0, 0)
            h.counts[index] += 1
            h.sum += value
            h.count += 1
            recorded.histograms[labelValues] = h
        }
    }

    /// The number of values observed for `labelValues`.
    public func count(_ labelValues: String...) -> UInt64 {
        family.recorded.withLock { $0.histograms[labelValues]?.count ?? 0 }
    }
}

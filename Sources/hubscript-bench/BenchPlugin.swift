import ScriptHost

/// `bench.echo(n)`: returns its integer argument. The cheapest real binding there is,
/// used by `scripts/bench-runtime` (through `hubscript-bench calls`) to measure the cost
/// of one Lua → Swift call (trampoline, argument read, result op).
enum BenchPlugin {
    static func make() -> Plugin {
        Plugin(module: "bench", summary: "Benchmark helpers (hubscript-bench calls only).", functions: [
            ScriptFunction("echo", summary: "bench.echo(n) -> n") { call in
                .value(.integer(try call.integer(1)))
            },
        ])
    }
}

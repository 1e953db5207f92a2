/// `bench.echo(n)`: returns its integer argument. The cheapest real binding there is,
/// used by `scripts/bench-runtime` to measure the cost of one Lua → Swift call
/// (trampoline, argument read, result op). The CLI installs it only when
/// `HUBSCRIPT_BENCH_PLUGIN=1`.
public enum BenchPlugin {
    public static func make() -> Plugin {
        Plugin(module: "bench", summary: "Benchmark helpers (HUBSCRIPT_BENCH_PLUGIN=1 only).", functions: [
            ScriptFunction("echo", summary: "bench.echo(n) -> n") { call in
                .value(.integer(try call.integer(1)))
            },
        ])
    }
}

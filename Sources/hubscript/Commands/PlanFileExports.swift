import Foundation

/// Where a saved plan's exports go: a folder beside the plan file, named after it
/// (`plans/offboard.json` → `plans/offboard.exports/`), never the run's folder, which
/// the plan's apply (the same run id) writes its own exports into.
enum PlanFileExports {
    static func folder(forPlanAt path: String) -> URL {
        let file = URL(fileURLWithPath: path)
        let base = file.pathExtension.lowercased() == "json" ? file.deletingPathExtension().lastPathComponent : file.lastPathComponent
        return file.deletingLastPathComponent().appendingPathComponent(base + ".exports", isDirectory: true)
    }
}

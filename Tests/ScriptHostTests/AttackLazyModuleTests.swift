import XCTest
import ScriptHost

/// Attacks on lazy modules that need no Hub (see also HubBindingsTests'
/// AttackLazyHubModuleTests).
final class AttackLazyModuleTests: RecipeTestCase {
    /// Before today `install` assigned `base[name] = module`, so a plugin named like a
    /// built-in global (`os` here) was what the recipe saw. Now `install` only marks the
    /// name lazy, and `base.__index` — the lazy path — never runs for a name `base`
    /// already holds: the plugin is registered but unreachable, silently.
    /// TODAY: prints "nil" (the built-in `os` table is what `os` names).
    func testAttackAPluginNamedLikeABuiltInGlobalIsWhatTheRecipeSees() {
        harness.plugins.append(Plugin(module: "os", values: ["answer": 42]))
        XCTAssertEqual(lines("print(os.answer)"), ["42"])
    }
}

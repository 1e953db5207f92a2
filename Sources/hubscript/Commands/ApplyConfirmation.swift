import Foundation
import SystemText
import HubClient
import RecipeModules
import RunJournal
import ScriptHost

/// `hubscript apply` on a terminal: shows the plan and asks before anything is sent.
///
/// Asks only when stdin and stdout are both terminals (a person is there to answer) and
/// neither `--yes` nor `--json` was given; a pipe, a file, a job or a script never gets
/// the question. Only `y` or `yes` (any case) applies; anything else, an empty line or
/// the end of input cancels with nothing sent. A plan without writes is not asked about
/// (there is nothing to send).
enum ApplyConfirmation {
    /// Whether to ask: both ends are a terminal and the command line did not answer.
    static func shouldAsk(yes: Bool, json: Bool, stdinIsTerminal: Bool = isatty(0) == 1,
                          stdoutIsTerminal: Bool = isatty(1) == 1) -> Bool {
        !yes && !json && stdinIsTerminal && stdoutIsTerminal
    }

    /// Whether the run would refuse the plan at once (another recipe version or profile:
    /// `Plan.check`). Such a plan is not offered: the run refuses it as without a question.
    static func wouldBeRefused(_ plan: Plan, common: CommonOptions.Values) -> Bool {
        guard let file = try? RecipeFile(path: plan.recipePath),
              let profile = try? common.hub.profile(named: common.profile).name else { return true }
        return (try? plan.check(recipeSHA256: Digest.sha256Hex(file.source), profile: profile, params: plan.params)) == nil
    }

    /// `Apply 3 writes to https://hub.example.com (profile prod)? [y/N] `.
    static func question(_ plan: Plan, hub: HubConfig) -> String {
        let n = plan.writes.count
        let target: String
        switch try? hub.profile(named: plan.profile).setting {
        case .hub(let profile)?: target = TerminalText.field(profile.hubURL.absoluteString)
        case .sandbox?: target = "the built-in sandbox"
        case nil: target = "the Hub"
        }
        return "Apply \(n) \(n == 1 ? "write" : "writes") to \(target) (profile \(TerminalText.field(plan.profile)))? [y/N] "
    }

    /// Shows the plan and the question on stdout and reads the answer from stdin.
    /// Returns whether the person said yes.
    static func ask(_ plan: Plan, hub: HubConfig) -> Bool {
        Console.out(PlanTable.render(plan, coloured: TerminalStyle.isColoured(.stdout)) + question(plan, hub: hub))
        guard let answer = readLine(strippingNewline: true) else {
            Console.out("\n")
            return false
        }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }
}

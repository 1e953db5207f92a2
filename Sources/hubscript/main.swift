import Foundation
import ScriptHost
import SystemText

// A reader that went away (`hubscript … | head`) is a write error like a full disk,
// reported when the command ends (StandardOutputLoss), not a silent death mid-run.
signal(SIGPIPE, SIG_IGN)
var status = HubscriptCLI.dispatch(Array(CommandLine.arguments.dropFirst()))
EmbeddedWebhooks.shared.finish()
if let report = StandardOutputLoss.report() {
    StandardError.write(report)
    if status == ExitCode.success { status = ExitCode.outputLost }
}
exit(status)

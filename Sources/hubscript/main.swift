import Foundation

let status = HubscriptCLI.dispatch(Array(CommandLine.arguments.dropFirst()))
EmbeddedWebhooks.shared.finish()
exit(status)

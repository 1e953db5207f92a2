import Foundation

exit(HubscriptCLI.dispatch(Array(CommandLine.arguments.dropFirst())))

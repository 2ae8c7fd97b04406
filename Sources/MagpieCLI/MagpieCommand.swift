import ArgumentParser
import Foundation
import MagpieImage

/// `magpie`: the command-line face of Magpie.
@main
struct MagpieCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "magpie",
        abstract: "Fetch, decode, convert and inspect images.",
        discussion: """
            Exit status: 0 on success, 1 when any input failed, 2 for a usage error.
            """,
        version: "0.1.0",
        subcommands: [Info.self, Convert.self, Thumbnail.self, CacheCommand.self, Fetch.self, Demo.self, Download.self, Request.self, Upload.self, Samples.self, DecodeBenchmark.self, ProcessBenchmark.self, CacheBenchmark.self])

    /// Parses and runs a subcommand; usage errors exit with status 2 (not ArgumentParser's 64).
    static func main() async {
        // A command-line run decodes a few large images back to back: keep freed buffers.
        ImageMemory.retainFreedMemory()
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            let code = exitCode(for: error)
            if code == .validationFailure {
                Terminal.error(fullMessage(for: error))
                Foundation.exit(2)
            }
            exit(withError: error)
        }
    }
}

/// Output helpers: results to stdout, problems to stderr.
enum Terminal {
    static func error(_ message: String) {
        fflush(nil)  // flush stdout first, to keep the order of interleaved results and errors
        FileHandle.standardError.write(Data((message + "\n").utf8))
    }

    /// Whether stdout is a terminal (for progress bars and colour).
    static var isInteractive: Bool { isatty(STDOUT_FILENO) != 0 }
}

import Foundation
import Logging
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport

/// One transport per test, shut down at the end, so no test leaks an event loop or connection.
func withClient<T: Sendable>(
    _ origin: TestOrigin, configure: (inout NetworkClient.Configuration) -> Void = { _ in },
    _ body: (NetworkClient) async throws -> T
) async throws -> T {
    let transport = AsyncHTTPClientTransport()
    var configuration = NetworkClient.Configuration(baseURL: origin.baseURL)
    configuration.transport = transport
    configuration.activity = NetworkActivity()
    configure(&configuration)
    let client = NetworkClient(configuration: configuration)
    do {
        let result = try await body(client)
        try await transport.shutdown()
        return result
    } catch {
        try? await transport.shutdown()
        throw error
    }
}

/// The JSON object the origin's /echo route returns.
struct Echo: Decodable {
    var method: String
    var path: String
    var query: String
    var headers: [String: String]
    var body: String

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A log handler that keeps every line, for checking what the client writes.
final class CapturingLogHandler: LogHandler, @unchecked Sendable {  // lines behind a lock
    let lines = LockedValue<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let fields = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        lines.withLock { $0.append("\(event.message) \(fields)") }
    }

    var text: String { lines.value.joined(separator: "\n") }
}

/// Waits until `condition` holds, checking every 10 ms, for at most `seconds`.
func eventually(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

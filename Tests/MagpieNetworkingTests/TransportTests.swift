import Foundation
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

@Suite("AsyncHTTPClient transport")
struct TransportTests {
    @Test("Bodies stream with progress: expected length when announced, -1 when not")
    func progress() async throws {
        try await TestOrigin.with { origin in
            let transport = AsyncHTTPClientTransport()
            defer { Task { try? await transport.shutdown() } }
            let seen = LockedValue<[TransferProgress]>([])
            var request = TransportRequest(url: origin.url("/bytes/200000"))
            request.onProgress = { value in seen.withLock { $0.append(value) } }
            let (data, response) = try await transport.data(for: request)
            #expect(data.count == 200_000)
            #expect(response.expectedLength == 200_000)
            #expect(seen.value.last == TransferProgress(completed: 200_000, expected: 200_000))
            #expect(seen.value.last?.fraction == 1)

            seen.withLock { $0 = [] }
            request.url = origin.url("/trickle/5000?chunk=1000&delay=1")
            let (trickled, _) = try await transport.data(for: request)
            #expect(trickled.count == 5000)
            #expect(seen.value.count == 5)
            #expect(seen.value.allSatisfy { $0.expected == -1 && $0.fraction == 0 })
            try await transport.shutdown()
        }
    }

    @Test("Cancelling a transfer closes its connection")
    func cancelCloses() async throws {
        try await TestOrigin.with { origin in
            let transport = AsyncHTTPClientTransport()
            let received = LockedValue(0)
            let task = Task {
                let response = try await transport.send(TransportRequest(url: origin.url("/trickle/10000000?chunk=1000&delay=5")))
                for try await chunk in response.body { received.withLock { $0 += chunk.count } }
            }
            #expect(await eventually(30) { received.value > 0 })
            task.cancel()
            let outcome = await task.result
            #expect(throws: NetworkError.self) { try outcome.get() }
            #expect(await eventually { origin.count("trickle-closed") == 1 })
            #expect(received.value < 10_000_000)
            try await transport.shutdown()
        }
    }

    @Test("A transfer that goes quiet for longer than the read timeout fails with a timeout")
    func readTimeout() async throws {
        try await TestOrigin.with { origin in
            let transport = AsyncHTTPClientTransport(readTimeout: .milliseconds(300))
            let request = TransportRequest(url: origin.url("/trickle/3000?chunk=1000&delay=2000"))
            let error = await #expect(throws: NetworkError.self) { _ = try await transport.data(for: request) }
            #expect(error?.kind == .timeout)
            try await transport.shutdown()
        }
    }

    @Test("A transport refuses requests after shutdown, and shutting down twice is harmless")
    func shutdown() async throws {
        try await TestOrigin.with { origin in
            let transport = AsyncHTTPClientTransport()
            try await transport.shutdown()
            try await transport.shutdown()
            await #expect(throws: NetworkError.self) { try await transport.send(TransportRequest(url: origin.url("/echo"))) }
        }
    }

    @Test("A refused connection is a connection failure that names the server and the reason")
    func refused() async throws {
        let transport = AsyncHTTPClientTransport()
        var request = TransportRequest(url: URL(string: "http://127.0.0.1:1/")!)
        request.timeout = .seconds(1)
        let error = await #expect(throws: NetworkError.self) { try await transport.send(request) }
        #expect(error?.kind == .connectionFailed)
        #expect(error?.detail == "cannot connect to 127.0.0.1:1: Connection refused")
        try await transport.shutdown()
    }

    @Test("Certificates are verified unless one request asks otherwise")
    func tlsDefault() {
        let request = TransportRequest(url: URL(string: "https://example.invalid/")!)
        #expect(request.allowsInvalidCertificates == false)
        #expect(NetworkRequest(.get, "x").allowsInvalidCertificates == false)
    }
}

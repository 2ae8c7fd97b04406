import AsyncHTTPClient
public import Foundation
import MagpieSupport
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import NIOPosix
import NIOSSL

/// ``HTTPTransport`` over AsyncHTTPClient.
///
/// Redirects are followed here, not by AsyncHTTPClient, so that every hop is shown to the
/// request's redirect hook, credentials stay on the original host, and cookies are applied per
/// hop. Certificates are verified unless a request asks otherwise; such requests go through a
/// second client that is made only when first needed.
///
/// Call ``shutdown()`` on a transport you made before it goes away; ``shared`` lives as long as
/// the process.
public final class AsyncHTTPClientTransport: HTTPTransport {
    /// A transport for the whole process.
    public static let shared = AsyncHTTPClientTransport()

    private let client: HTTPClient
    private let insecure = LockedValue<HTTPClient?>(nil)
    private let isShutDown = LockedValue(false)
    private let timeouts: HTTPClient.Configuration.Timeout

    /// A transport with its own connection pool. A connection must be made within
    /// `connectTimeout`, and a transfer that receives nothing for `readTimeout` fails (nil: no
    /// limit); a request's own timeout bounds the whole exchange.
    public init(connectTimeout: Duration = .seconds(10), readTimeout: Duration? = .seconds(60)) {
        func amount(_ duration: Duration) -> TimeAmount {
            .nanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
        }
        timeouts = HTTPClient.Configuration.Timeout(connect: amount(connectTimeout), read: readTimeout.map(amount))
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.configuration(tls: nil, timeouts: timeouts))
    }

    private static func configuration(tls: TLSConfiguration?, timeouts: HTTPClient.Configuration.Timeout) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls, redirectConfiguration: .disallow, timeout: timeouts, decompression: .disabled)
        configuration.httpVersion = .automatic
        return configuration
    }

    /// Closes the connections and stops the clients. Requests after this fail.
    public func shutdown() async throws {
        let first = isShutDown.withLock { state -> Bool in
            defer { state = true }
            return !state
        }
        guard first else { return }
        try await client.shutdown()
        if let insecure = insecure.withLock({ client -> HTTPClient? in
            defer { client = nil }
            return client
        }) {
            try await insecure.shutdown()
        }
    }

    private func client(allowingInvalidCertificates: Bool) -> HTTPClient {
        guard allowingInvalidCertificates else { return client }
        return insecure.withLock { existing in
            if let existing { return existing }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.certificateVerification = .none
            let made = HTTPClient(eventLoopGroupProvider: .singleton, configuration: Self.configuration(tls: tls, timeouts: timeouts))
            existing = made
            return made
        }
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let deadline = NIODeadline.now() + .nanoseconds(Int64(request.timeout.components.seconds) * 1_000_000_000
            + request.timeout.components.attoseconds / 1_000_000_000)
        var url = request.url
        var method = request.method
        var body = request.body
        var hops = 0
        while true {
            let head = try await execute(request, url: url, method: method, body: body, deadline: deadline)
            let status = Int(head.status.code)
            if let cookies = request.cookies { cookies.store(head.headers.values(for: "Set-Cookie"), from: url) }
            guard [301, 302, 303, 307, 308].contains(status), request.maxRedirects > 0,
                  let location = head.headers["Location"], let next = URL(string: location, relativeTo: url)?.absoluteURL else {
                return TransportResponse(
                    status: status, headers: head.headers, url: url,
                    body: Self.body(head.response, url: url, limit: request.maxResponseSize, progress: request.onProgress,
                                    expected: head.headers["Content-Length"].flatMap(Int64.init) ?? -1))
            }
            // A redirect: this body is dropped unread (AsyncHTTPClient then ends the request) and we go on.
            guard hops < request.maxRedirects else {
                throw NetworkError(.tooManyRedirects, url: request.url, "more than \(request.maxRedirects) redirects")
            }
            guard next.scheme == "http" || next.scheme == "https" else {
                throw NetworkError(.redirectRejected, url: next, "redirect to a \(next.scheme ?? "relative") URL")
            }
            if let hook = request.redirectHook {
                do {
                    try hook(RedirectHop(from: url, to: next, status: status, index: hops))
                } catch {
                    throw NetworkError(.redirectRejected, url: next, "redirect refused: \(error)", underlying: error)
                }
            }
            if status == 303 || ((status == 301 || status == 302) && method == .post) {
                method = method == .head ? .head : .get
                body = nil
            }
            url = next
            hops += 1
        }
    }

    /// What one exchange returned before its body is read.
    private struct Head {
        var status: HTTPResponseStatus
        var headers: HeaderFields
        var response: HTTPClientResponse
    }

    private func execute(
        _ request: TransportRequest, url: URL, method: HTTPMethod, body: RequestBody?, deadline: NIODeadline
    ) async throws -> Head {
        var outgoing = HTTPClientRequest(url: url.absoluteString)
        outgoing.method = HTTPMethod_NIO(rawValue: method.rawValue)
        for field in request.headers where !field.name.caseInsensitiveEquals("Authorization") || Self.sameOrigin(url, request.url) {
            outgoing.headers.add(name: field.name, value: field.value)
        }
        if let credentials = request.credentials, Self.sameOrigin(url, request.url), !request.headers.contains("Authorization") {
            outgoing.headers.replaceOrAdd(name: "Authorization", value: credentials.headerValue)
        }
        if let cookies = request.cookies, let header = cookies.header(for: url) {
            outgoing.headers.replaceOrAdd(name: "Cookie", value: header)
        }
        if let body {
            outgoing.body = try Self.requestBody(body, progress: request.onUploadProgress)
        }
        do {
            let response = try await client(allowingInvalidCertificates: request.allowsInvalidCertificates)
                .execute(outgoing, deadline: deadline)
            var headers = HeaderFields()
            for header in response.headers { headers.add(header.name, header.value) }
            return Head(status: response.status, headers: headers, response: response)
        } catch {
            throw Self.mapError(error, url: url)
        }
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && a.port == b.port
    }

    static func mapError(_ error: any Error, url: URL?) -> NetworkError {
        if let error = error as? NetworkError { return error }
        if error is CancellationError { return NetworkError(.cancelled, url: url, "cancelled", underlying: error) }
        if let client = error as? HTTPClientError {
            switch client {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .writeTimeout:
                return NetworkError(.timeout, url: url, "timed out", underlying: error)
            case .cancelled:
                return NetworkError(.cancelled, url: url, "cancelled", underlying: error)
            case .remoteConnectionClosed:
                return NetworkError(.connectionFailed, url: url, "the server closed the connection", underlying: error)
            default:
                return NetworkError(.connectionFailed, url: url, "request failed: \(client)", underlying: error)
            }
        }
        let place = url.map { "\($0.host ?? "?")\($0.port.map { ":\($0)" } ?? "")" } ?? "the server"
        if let io = error as? IOError {
            return NetworkError(.connectionFailed, url: url, "cannot connect to \(place): \(String(cString: strerror(io.errnoCode)))", underlying: error)
        }
        if let connection = error as? NIOConnectionError, connection.dnsAError != nil || connection.dnsAAAAError != nil {
            return NetworkError(.connectionFailed, url: url, "cannot resolve \(place): unknown host", underlying: error)
        }
        if let address = error as? SocketAddressError, case .unknown = address {
            return NetworkError(.connectionFailed, url: url, "cannot resolve \(place): unknown host", underlying: error)
        }
        return NetworkError(.connectionFailed, url: url, "request failed: \(error)", underlying: error)
    }

    private static func requestBody(_ body: RequestBody, progress: (@Sendable (TransferProgress) -> Void)?) throws -> HTTPClientRequest.Body {
        switch body {
        case .data(let data):
            guard let progress else { return .bytes(ByteBuffer(data: data)) }
            let total = Int64(data.count)
            return .stream(Self.counting(Self.chunks(of: data), total: total, progress: progress), length: .known(total))
        case .file(let url):
            guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value else {
                throw NetworkError(.fileFailed, url: url, "cannot read \(url.path)")
            }
            let stream = FileChunks(url: url).stream()
            return .stream(Self.counting(stream, total: size, progress: progress), length: .known(size))
        case .stream(let length, let make):
            return .stream(Self.counting(make(), total: length ?? -1, progress: progress), length: length.map { .known($0) } ?? .unknown)
        }
    }

    /// `data` in 64 KB slices, one when asked for.
    private static func chunks(of data: Data) -> AsyncThrowingStream<Data, any Error> {
        let offset = LockedValue(0)
        return AsyncThrowingStream {
            offset.withLock { start -> Data? in
                guard start < data.count else { return nil }
                let end = min(start + 64 * 1024, data.count)
                defer { start = end }
                return data.subdata(in: start..<end)
            }
        }
    }

    private static func counting(
        _ stream: AsyncThrowingStream<Data, any Error>, total: Int64, progress: (@Sendable (TransferProgress) -> Void)?
    ) -> AsyncThrowingMapSequence<AsyncThrowingStream<Data, any Error>, ByteBuffer> {
        let sent = LockedValue<Int64>(0)
        return stream.map { chunk in
            let completed = sent.withLock { value -> Int64 in
                value += Int64(chunk.count)
                return value
            }
            progress?(TransferProgress(completed: completed, expected: total))
            return ByteBuffer(data: chunk)
        }
    }

    /// The body as Data chunks, counted against `limit`, reporting progress; single use.
    private static func body(
        _ response: HTTPClientResponse, url: URL, limit: Int64?, progress: (@Sendable (TransferProgress) -> Void)?, expected: Int64
    ) -> ResponseBody {
        if let limit, expected > limit {
            return .failing(NetworkError(.responseTooLarge, url: url, "the response is \(expected) bytes, more than the limit of \(limit)"))
        }
        let source = BodyIterator(response.body.makeAsyncIterator())
        let received = LockedValue<Int64>(0)
        return ResponseBody {
            do {
                try Task.checkCancellation()
                guard let buffer = try await source.next() else {
                    try Task.checkCancellation()
                    return nil
                }
                let total = received.withLock { value -> Int64 in
                    value += Int64(buffer.readableBytes)
                    return value
                }
                if let limit, total > limit {
                    throw NetworkError(.responseTooLarge, url: url, "the response passed the limit of \(limit) bytes")
                }
                progress?(TransferProgress(completed: total, expected: expected))
                return Data(buffer.readableBytesView)
            } catch {
                throw mapError(error, url: url)
            }
        }
    }
}

/// The one iterator of a response body, shared by the stream that reads it.
private final class BodyIterator: @unchecked Sendable {  // used by one consumer at a time (the body is single-use)
    private var iterator: HTTPClientResponse.Body.AsyncIterator
    init(_ iterator: HTTPClientResponse.Body.AsyncIterator) { self.iterator = iterator }
    func next() async throws -> ByteBuffer? { try await iterator.next() }
}

typealias HTTPMethod_NIO = NIOHTTP1.HTTPMethod

/// A file read in chunks, one when the consumer asks (so a large upload never sits in memory).
struct FileChunks: Sendable {
    let url: URL
    var chunkSize = 256 * 1024

    func stream() -> AsyncThrowingStream<Data, any Error> {
        let reader = FileReader(url: url, chunkSize: chunkSize)
        return AsyncThrowingStream { try reader.next() }
    }
}

final class FileReader: @unchecked Sendable {  // pulled by one stream consumer at a time
    let url: URL
    let chunkSize: Int
    private var handle: FileHandle?
    private var done = false

    init(url: URL, chunkSize: Int) {
        self.url = url
        self.chunkSize = chunkSize
    }

    deinit { try? handle?.close() }

    func next() throws -> Data? {
        guard !done else { return nil }
        do {
            if handle == nil { handle = try FileHandle(forReadingFrom: url) }
            guard let chunk = try handle?.read(upToCount: chunkSize), !chunk.isEmpty else {
                done = true
                try? handle?.close()
                handle = nil
                return nil
            }
            return chunk
        } catch {
            done = true
            throw NetworkError(.fileFailed, url: url, "cannot read \(url.path): \(error)")
        }
    }
}

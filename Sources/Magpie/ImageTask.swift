public import Foundation
public import MagpieImage
public import MagpieNetworking
import MagpieSupport

/// What a callback of ``ImagePipeline/loadImage(with:progress:completion:)`` receives: a
/// preview (stage ``ImageStage/progress``, for progressive loads), then exactly once the end
/// (``ImageStage/finished`` with an image or an error, or ``ImageStage/cancelled``).
public struct ImageTaskResult: Sendable {
    /// The stage.
    public var stage: ImageStage
    /// The preview or final image.
    public var image: Image?
    /// The encoded bytes, when the load had them.
    public var data: Data?
    /// The URL asked for.
    public var url: URL?
    /// Where the final image came from.
    public var source: ImageSource?
    /// The failure, for a finished load that failed (and ``ImagePipelineError/Kind/cancelled``
    /// for a cancelled one).
    public var error: ImagePipelineError?
    /// The HTTP status of a remote load.
    public var status: Int?
    /// The HTTP headers of a remote load.
    public var headers: HeaderFields?

    /// A result; every field but the stage is optional.
    public init(
        stage: ImageStage, image: Image? = nil, data: Data? = nil, url: URL? = nil, source: ImageSource? = nil,
        error: ImagePipelineError? = nil, status: Int? = nil, headers: HeaderFields? = nil
    ) {
        self.stage = stage
        self.image = image
        self.data = data
        self.url = url
        self.source = source
        self.error = error
        self.status = status
        self.headers = headers
    }
}

/// One caller's load. Cancelling it ends this caller's load only; work shared with other
/// callers goes on for them.
public final class ImageTask: Sendable, Hashable, CustomStringConvertible {
    /// The state of a task.
    public enum State: String, Sendable {
        case running, cancelled, completed
    }

    /// Unique within the process.
    public let id: Int
    /// What was asked.
    public let request: ImageRequest

    struct Callbacks: Sendable {
        var progress: (@Sendable (TransferProgress) -> Void)?
        var completion: (@Sendable (ImageTaskResult) -> Void)?
    }

    private struct Inner: Sendable {
        var priority: ImagePriority
        var result: Result<ImageResponse, ImagePipelineError>?
        var state = State.running
        var detach: (@Sendable () -> Void)?
        var prioritize: (@Sendable (ImagePriority) -> Void)?
        var progressStreams: [Int: AsyncStream<TransferProgress>.Continuation] = [:]
        var previewStreams: [Int: AsyncStream<Image>.Continuation] = [:]
        var waiters: [CheckedContinuation<ImageResponse, any Error>] = []
        var lastProgress: TransferProgress?
        var nextStream = 0
        /// Preview callbacks running now; the final callback waits for them (it is then made by
        /// the last one to return), so no preview ever reaches the callback after the end.
        var previewsInFlight = 0
        var pendingCompletion: ImageTaskResult?
    }

    private let inner: LockedValue<Inner>
    private let callbacks: Callbacks
    private let onEnd: @Sendable (ImageTask, Result<ImageResponse, ImagePipelineError>) -> Void

    init(id: Int, request: ImageRequest, callbacks: Callbacks,
         onEnd: @escaping @Sendable (ImageTask, Result<ImageResponse, ImagePipelineError>) -> Void) {
        self.id = id
        self.request = request
        self.callbacks = callbacks
        self.onEnd = onEnd
        inner = LockedValue(Inner(priority: request.priority))
    }

    public static func == (a: ImageTask, b: ImageTask) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
    public var description: String { "ImageTask #\(id) \(request.url?.absoluteString ?? "(no URL)") [\(state.rawValue)]" }

    /// Running, cancelled or completed.
    public var state: State { inner.withLock { $0.state } }

    /// The priority; changing it reorders the shared work if this caller was its most urgent.
    public var priority: ImagePriority {
        get { inner.withLock { $0.priority } }
        set {
            let prioritize = inner.withLock { inner -> (@Sendable (ImagePriority) -> Void)? in
                inner.priority = newValue
                return inner.state == .running ? inner.prioritize : nil
            }
            prioritize?(newValue)
        }
    }

    /// Ends this caller's load: the completion reports ``ImageStage/cancelled`` (once), the
    /// streams end, and shared work stops if no other caller wants it.
    public func cancel() {
        complete(.failure(.cancelled(request.url)))
    }

    /// Bytes received, as they arrive (a caller that joined a running download starts from
    /// where it is). Ends when the task ends.
    public var progress: AsyncStream<TransferProgress> {
        AsyncStream { continuation in
            let (ended, last) = inner.withLock { inner -> (Bool, TransferProgress?) in
                guard inner.result == nil else { return (true, nil) }
                inner.nextStream += 1
                let key = inner.nextStream
                inner.progressStreams[key] = continuation
                return (false, inner.lastProgress)
            }
            if let last { continuation.yield(last) }
            if ended { continuation.finish() }
        }
    }

    /// Previews of a ``ImageOptions/progressive`` load, as they are made. Ends when the task ends.
    public var previews: AsyncStream<Image> {
        AsyncStream { continuation in
            let ended = inner.withLock { inner -> Bool in
                guard inner.result == nil else { return true }
                inner.nextStream += 1
                inner.previewStreams[inner.nextStream] = continuation
                return false
            }
            if ended { continuation.finish() }
        }
    }

    /// Waits for the end: the response, or the error (``ImagePipelineError``).
    public var response: ImageResponse {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let done = inner.withLock { inner -> Result<ImageResponse, ImagePipelineError>? in
                    if let result = inner.result { return result }
                    inner.waiters.append(continuation)
                    return nil
                }
                if let done { continuation.resume(with: done.mapError { $0 as any Error }) }
            }
        }
    }

    /// Waits for the image.
    public var image: Image {
        get async throws {
            let response = try await response
            guard let image = response.image else {
                throw ImagePipelineError(.decodingFailed, url: request.url, "the load returned data only (ignoreImageDecoding)")
            }
            return image
        }
    }

    // MARK: - Driven by the pipeline

    /// Connects the task to its shared work. When the task already ended, `detach` runs at once.
    func attach(detach: @escaping @Sendable () -> Void, prioritize: @escaping @Sendable (ImagePriority) -> Void) {
        let ended = inner.withLock { inner -> Bool in
            guard inner.state == .running else { return true }
            inner.detach = detach
            inner.prioritize = prioritize
            return false
        }
        if ended { detach() }
    }

    func report(_ progress: TransferProgress) {
        let streams = inner.withLock { inner -> [AsyncStream<TransferProgress>.Continuation]? in
            guard inner.state == .running else { return nil }
            inner.lastProgress = progress
            return Array(inner.progressStreams.values)
        }
        guard let streams else { return }
        for stream in streams { stream.yield(progress) }
        callbacks.progress?(progress)
    }

    func preview(_ image: Image) {
        let counted = callbacks.completion != nil
        let streams = inner.withLock { inner -> [AsyncStream<Image>.Continuation]? in
            guard inner.state == .running else { return nil }
            if counted { inner.previewsInFlight += 1 }
            return Array(inner.previewStreams.values)
        }
        guard let streams else { return }
        for stream in streams { stream.yield(image) }
        guard let completion = callbacks.completion else { return }
        completion(ImageTaskResult(stage: .progress, image: image, url: request.url))
        let pending = inner.withLock { inner -> ImageTaskResult? in
            inner.previewsInFlight -= 1
            guard inner.previewsInFlight == 0 else { return nil }
            defer { inner.pendingCompletion = nil }
            return inner.pendingCompletion
        }
        if let pending { completion(pending) }
    }

    /// Ends the task with `result`; only the first call has an effect.
    func complete(_ result: Result<ImageResponse, ImagePipelineError>) {
        let final: ImageTaskResult? = callbacks.completion == nil ? nil : {
            switch result {
            case .success(let response):
                ImageTaskResult(
                    stage: .finished, image: response.image, data: response.data, url: response.url, source: response.source,
                    status: response.status, headers: response.headers)
            case .failure(let error):
                ImageTaskResult(stage: error.kind == .cancelled ? .cancelled : .finished, url: request.url, error: error)
            }
        }()
        let ended = inner.withLock { inner -> (detach: (@Sendable () -> Void)?, waiters: [CheckedContinuation<ImageResponse, any Error>],
                                               progress: [AsyncStream<TransferProgress>.Continuation], previews: [AsyncStream<Image>.Continuation],
                                               deferred: Bool)? in
            guard inner.result == nil else { return nil }
            inner.result = result
            if case .failure(let error) = result, error.kind == .cancelled {
                inner.state = .cancelled
            } else {
                inner.state = .completed
            }
            let deferred = inner.previewsInFlight > 0
            if deferred { inner.pendingCompletion = final }
            defer {
                inner.waiters = []
                inner.progressStreams = [:]
                inner.previewStreams = [:]
                inner.detach = nil
                inner.prioritize = nil
            }
            return (inner.detach, inner.waiters, Array(inner.progressStreams.values), Array(inner.previewStreams.values), deferred)
        }
        guard let ended else { return }
        ended.detach?()
        for stream in ended.progress { stream.finish() }
        for stream in ended.previews { stream.finish() }
        onEnd(self, result)
        if !ended.deferred, let final { callbacks.completion?(final) }
        for waiter in ended.waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
}

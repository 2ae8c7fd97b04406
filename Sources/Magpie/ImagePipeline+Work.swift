import Foundation
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport

/// Downloaded (or read) bytes and where they came from.
struct FetchedData: Sendable {
    var data: Data
    var source: ImageSource
    var status: Int?
    var headers: HeaderFields?
}

/// A decoded image and the bytes it came from.
struct DecodedImage: Sendable {
    var image: Image
    var fetched: FetchedData
}

/// Waits for an upstream job on behalf of a downstream one, leaving it if the downstream job
/// is cancelled, and passing the downstream priority up.
private final class UpstreamWait<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var continuation: CheckedContinuation<Result<Value, ImagePipelineError>, Never>?
        var result: Result<Value, ImagePipelineError>?
        var job: SharedJob<Value>?
        var cancelled = false
    }

    private let state = LockedValue(State())
    let id: Int

    init(id: Int) { self.id = id }

    func wait(_ register: @escaping @Sendable () -> Void) async -> Result<Value, ImagePipelineError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<Value, ImagePipelineError>? in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let ready {
                continuation.resume(returning: ready)
            } else {
                register()
            }
        }
    }

    func resolve(_ result: Result<Value, ImagePipelineError>) {
        let continuation = state.withLock { state -> CheckedContinuation<Result<Value, ImagePipelineError>, Never>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: result)
    }

    func attach(_ job: SharedJob<Value>) {
        let leave = state.withLock { state -> Bool in
            state.job = job
            return state.cancelled
        }
        if leave { job.remove(id) }
    }

    func cancel(url: URL?) {
        let job = state.withLock { state -> SharedJob<Value>? in
            state.cancelled = true
            return state.job
        }
        job?.remove(id)
        resolve(.failure(.cancelled(url)))
    }
}

extension ImagePipeline {
    /// Subscribes `parent`'s work to the upstream job for `key` and waits for its result;
    /// progress, chunks and previews go to `forward`.
    func awaitUpstream<Value: Sendable, Parent: Sendable>(
        _ registry: JobRegistry<Value>, key: String, parent: SharedJob<Parent>, url: URL, wantsChunks: Bool = false,
        forward: @escaping @Sendable (JobEvent<Value>) -> Void,
        work: @escaping @Sendable (SharedJob<Value>) async -> Void
    ) async -> Result<Value, ImagePipelineError> {
        let waiter = UpstreamWait<Value>(id: nextID())
        return await withTaskCancellationHandler {
            await waiter.wait {
                let job = registry.subscribe(
                    key: key, id: waiter.id,
                    .init(priority: parent.priority, wantsChunks: wantsChunks) { event in
                        switch event {
                        case .value(let value): waiter.resolve(.success(value))
                        case .failure(let error): waiter.resolve(.failure(error))
                        default: forward(event)
                        }
                    }, work: work)
                waiter.attach(job)
                parent.observePriority { [weak job] priority in job?.setPriority(priority, for: waiter.id) }
            }
        } onCancel: {
            waiter.cancel(url: url)
        }
    }

    // MARK: - Processed image (memory, processed disk entry, or decode + process)

    func processedWork(_ job: SharedJob<ImageResponse>, request: ImageRequest, url: URL, keys: LoadKeys) async {
        let cache = configuration.imageCache
        let key = keys.processed
        let refresh = request.options.contains(.refreshCache)
        let useDisk = cache?.disk != nil && !request.options.contains(.ignoreDiskCache)
        let transformed = key != keys.cache

        if !refresh, let image = cache?.memoryImage(forKey: key) {
            job.finish(.success(ImageResponse(image: image, data: nil, url: url, source: .memory)))
            return
        }
        if transformed && useDisk && !refresh && !request.options.contains(.useHTTPCache),
           let data = try? await cache?.disk?.data(forKey: key) {
            do {
                let image = try await work.run { try Image(data: data) }
                cache?.memory?.setValue(image, forKey: key, cost: image.cost)
                job.finish(.success(ImageResponse(image: image, data: nil, url: url, source: .disk)))
                return
            } catch {
                // A processed entry that no longer decodes: make it again.
                try? await cache?.disk?.removeValue(forKey: key)
            }
        }

        let transform = self.transform(for: request, url: url)
        let previewQueue = LockedValue<PreviewQueue>(PreviewQueue())
        let decoded = await awaitUpstream(
            imageJobs, key: keys.decode, parent: job, url: url,
            forward: { [work] event in
                switch event {
                case .progress(let progress): job.send(.progress(progress))
                case .preview(let preview):
                    guard let transform else {
                        job.send(.preview(preview))
                        return
                    }
                    // One preview is processed at a time, in order; one that arrives meanwhile
                    // waits, replacing any older one still waiting.
                    let start = previewQueue.withLock { queue -> Bool in
                        if queue.busy {
                            queue.waiting = preview
                            return false
                        }
                        queue.busy = true
                        return true
                    }
                    guard start else { return }
                    Task {
                        var next: Image? = preview
                        while let current = next {
                            if !job.isEnded, let processed = try? await work.run({ try transform(current) }) {
                                job.send(.preview(processed))
                            }
                            next = previewQueue.withLock { queue -> Image? in
                                defer { queue.waiting = nil }
                                if queue.waiting == nil { queue.busy = false }
                                return queue.waiting
                            }
                        }
                    }
                default: break
                }
            },
            work: { [self] upstream in await decodeWork(upstream, request: request, url: url, keys: keys) })

        switch decoded {
        case .failure(let error):
            job.finish(.failure(error))
        case .success(let decoded):
            do {
                if transform != nil { counts.withLock { $0.processings += 1 } }
                let image = try await work.run { try transform?(decoded.image) ?? decoded.image }
                cache?.memory?.setValue(image, forKey: key, cost: image.cost)
                if transformed && useDisk, let cache {
                    // Processed images are kept encoded (lossless with alpha, JPEG otherwise).
                    if let bytes = try? await work.run({ try cache.encode(image) }) {
                        try? await cache.disk?.setData(bytes, forKey: key)
                    }
                }
                job.finish(.success(ImageResponse(
                    image: image, data: transformed ? nil : decoded.fetched.data, url: url, source: decoded.fetched.source,
                    status: decoded.fetched.status, headers: decoded.fetched.headers)))
            } catch is CancellationError {
                job.finish(.failure(.cancelled(url)))
            } catch {
                job.finish(.failure(ImagePipelineError(.processingFailed, url: url, "processing failed: \(error)", underlying: error)))
            }
        }
    }

    /// The request's processors, or the shared transform, as one function; nil when neither.
    func transform(for request: ImageRequest, url: URL) -> (@Sendable (Image) throws -> Image)? {
        if !request.processors.isEmpty {
            let processors = request.processors
            return { try $0.processed(by: processors) }
        }
        if let shared = configuration.sharedTransform {
            return { try shared.apply($0, url) }
        }
        return nil
    }

    // MARK: - Decoding (with previews for progressive loads)

    func decodeWork(_ job: SharedJob<DecodedImage>, request: ImageRequest, url: URL, keys: LoadKeys) async {
        let progressive = request.options.contains(.progressive)
        let options = decodingOptions(for: request)
        let previews = progressive ? PreviewDecoder(options: options, configuration: .init(
            minimumPreviewInterval: configuration.previewInterval, blurPreviews: request.options.contains(.progressiveBlur))) : nil

        let fetched = await awaitUpstream(
            dataJobs, key: keys.data, parent: job, url: url, wantsChunks: progressive,
            forward: { event in
                switch event {
                case .progress(let progress): job.send(.progress(progress))
                case .chunk(let data): if let preview = previews?.append(data) { job.send(.preview(preview)) }
                default: break
                }
            },
            work: { [self] upstream in await dataWork(upstream, request: request, url: url, keys: keys) })

        switch fetched {
        case .failure(let error):
            job.finish(.failure(error))
        case .success(let fetched):
            let started = ContinuousClock.now
            counts.withLock { $0.decodes += 1 }
            do {
                let budget = configuration.scaleDownBudget
                let thumbnail = request.thumbnail
                let scaleDown = request.options.contains(.scaleDownLargeImages)
                let image = try await work.run { () throws -> Image in
                    if let thumbnail { return try Image(thumbnailOf: fetched.data, options: thumbnail, decoding: options) }
                    var options = options
                    if scaleDown, let info = try? ImageInfo(data: fetched.data) {
                        options.targetSize = Self.budgetSize(info.size, budget: budget)
                    }
                    return try Image(data: fetched.data, options: options)
                }
                metrics.decoded(ContinuousClock.now - started)
                job.finish(.success(DecodedImage(image: image, fetched: fetched)))
            } catch is CancellationError {
                job.finish(.failure(.cancelled(url)))
            } catch {
                job.finish(.failure(ImagePipelineError(.decodingFailed, url: url, "cannot decode the image: \(error)", underlying: error)))
            }
        }
    }

    func decodingOptions(for request: ImageRequest) -> ImageDecodingOptions {
        var options = ImageDecodingOptions()
        options.maxPixelCount = configuration.maxPixelCount
        options.applyOrientation = true
        options.firstFrameOnly = request.options.contains(.ignoreAnimatedImage)
        return options
    }

    /// The largest size with the aspect of `size` whose RGBA bitmap fits `budget` bytes; nil
    /// when `size` already fits.
    static func budgetSize(_ size: PixelSize, budget: Int) -> PixelSize? {
        let bytes = Double(size.width) * Double(size.height) * 4
        guard bytes > Double(budget), size.width > 0, size.height > 0 else { return nil }
        let scale = (Double(budget) / bytes).squareRoot()
        return PixelSize(width: max(1, Int(Double(size.width) * scale)), height: max(1, Int(Double(size.height) * scale)))
    }

    // MARK: - Data (disk, file, or network with revalidation)

    func dataWork(_ job: SharedJob<FetchedData>, request: ImageRequest, url: URL, keys: LoadKeys) async {
        do {
            job.finish(.success(try await fetch(job, request: request, url: url, cacheKey: keys.cache)))
        } catch let error as ImagePipelineError {
            job.finish(.failure(error))
        } catch is CancellationError {
            job.finish(.failure(.cancelled(url)))
        } catch let error as NetworkError {
            job.finish(.failure(Self.map(error, url: url)))
        } catch {
            job.finish(.failure(ImagePipelineError(.network, url: url, "the download failed: \(error)", underlying: error)))
        }
    }

    static func map(_ error: NetworkError, url: URL) -> ImagePipelineError {
        switch error.kind {
        case .cancelled: return .cancelled(url)
        case .unacceptableStatus: return ImagePipelineError(.status, url: url, error.detail, status: error.status, underlying: error)
        default: return ImagePipelineError(.network, url: url, error.detail, underlying: error)
        }
    }

    /// Reads a local file, at most `limit` bytes (the response-size limit holds for files too:
    /// a file URL may name /dev/zero or a file still growing).
    static func readFile(_ url: URL, limit: Int64?) throws(ImagePipelineError) -> Data {
        let path = url.path
        func failure(_ what: String) -> ImagePipelineError {
            ImagePipelineError(.fileFailed, url: url, "cannot read \(path): \(what)")
        }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var info = stat()
        if fstat(descriptor, &info) == 0 {
            if (info.st_mode & S_IFMT) == S_IFDIR { throw failure("it is a directory") }
            if let limit, (info.st_mode & S_IFMT) == S_IFREG, Int64(info.st_size) > limit {
                throw failure("\(info.st_size) bytes, more than the \(limit)-byte limit")
            }
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure(String(cString: strerror(errno)))
            }
            data.append(contentsOf: buffer[0..<count])
            if let limit, Int64(data.count) > limit { throw failure("more than the \(limit)-byte limit") }
        }
    }

    private func fetch(_ job: SharedJob<FetchedData>, request: ImageRequest, url: URL, cacheKey key: String) async throws -> FetchedData {
        if url.isFileURL {
            let limit = configuration.maxResponseSize
            let data = try await work.run { () throws -> Data in try Self.readFile(url, limit: limit) }
            job.send(.progress(TransferProgress(completed: Int64(data.count), expected: Int64(data.count))))
            return FetchedData(data: data, source: .remote)
        }

        let options = request.options
        let disk = options.contains(.ignoreDiskCache) ? nil : configuration.imageCache?.disk
        var cached: (data: Data, metadata: CacheMetadata?)?
        if let disk, let data = try? await disk.data(forKey: key) {
            let metadata = CacheMetadata.decode(try? await disk.metadata(forKey: key))
            let stale = options.contains(.useHTTPCache) && !(metadata?.isFresh(at: Date()) ?? false)
            if !options.contains(.refreshCache) && !stale {
                return FetchedData(data: data, source: .disk)
            }
            cached = (data, metadata)
        }

        // The network, in a download slot.
        let token = nextID()
        job.observePriority { [slots] priority in slots.setPriority(priority, for: token) }
        try await slots.acquire(token: token, priority: job.priority)
        defer { slots.release() }
        let activity = options.contains(.showNetworkActivity) ? configuration.activity : nil
        activity?.increment()
        defer { activity?.decrement() }

        var transport = TransportRequest(url: url)
        transport.headers = headers(for: request)
        transport.timeout = configuration.timeout == .zero ? .seconds(15) : configuration.timeout
        transport.maxResponseSize = configuration.maxResponseSize
        transport.credentials = usableCredentials
        transport.cookies = options.contains(.handleCookies) ? configuration.cookies : nil
        transport.allowsInvalidCertificates = options.contains(.allowInvalidCertificates)
        let revalidating = cached?.metadata?.hasValidators == true
        if revalidating, let metadata = cached?.metadata {
            if let etag = metadata.etag { transport.headers["If-None-Match"] = etag }
            if let lastModified = metadata.lastModified { transport.headers["If-Modified-Since"] = lastModified }
        }

        self.counts.withLock { $0.downloads += 1 }
        let response = try await configuration.transport.send(transport)
        responseReceived(url, status: response.status)
        if response.status == 304 {
            guard let cached, revalidating else {
                throw ImagePipelineError(.notModifiedWithoutCache, url: url, "the server answered 304 Not Modified but no cached bytes exist")
            }
            // Keep the bytes; renew their freshness with the new headers (validators kept when absent).
            var renewed = CacheMetadata(headers: response.headers, now: Date())
            renewed.etag = renewed.etag ?? cached.metadata?.etag
            renewed.lastModified = renewed.lastModified ?? cached.metadata?.lastModified
            try? await disk?.setData(cached.data, forKey: key, metadata: renewed.encoded())
            return FetchedData(data: cached.data, source: .remote, status: 304, headers: response.headers)
        }
        guard (200..<300).contains(response.status) else {
            throw ImagePipelineError(.status, url: url, "the server answered \(response.status) \(HTTPStatus.reason(response.status))",
                                     status: response.status)
        }

        var data = Data()
        let expected = response.expectedLength
        if expected > 0 { data.reserveCapacity(Int(min(expected, 64 << 20))) }
        var lastReport = ContinuousClock.now - .seconds(1)
        for try await chunk in response.body {
            data.append(chunk)
            job.send(.chunk(chunk))
            let now = ContinuousClock.now
            if now - lastReport >= .milliseconds(30) || Int64(data.count) == expected {
                lastReport = now
                job.send(.progress(TransferProgress(completed: Int64(data.count), expected: expected)))
            }
        }
        try Task.checkCancellation()
        job.send(.progress(TransferProgress(completed: Int64(data.count), expected: expected >= 0 ? expected : Int64(data.count))))
        metrics.downloaded(data.count)

        let metadata = CacheMetadata(headers: response.headers, now: Date())
        let forbidden = options.contains(.useHTTPCache) && HTTPCachePolicy(headers: response.headers).noStore
        if let disk, !forbidden {
            try? await disk.setData(data, forKey: key, metadata: metadata.encoded())
        }
        return FetchedData(data: data, source: .remote, status: response.status, headers: response.headers)
    }
}

/// An incremental decoder behind a lock, fed by whichever thread delivers chunks.
final class PreviewDecoder: Sendable {
    private let decoder: LockedValue<IncrementalBox>

    init(options: ImageDecodingOptions, configuration: IncrementalImageDecoder.Configuration) {
        decoder = LockedValue(IncrementalBox(IncrementalImageDecoder(options: options, configuration: configuration)))
    }

    /// Appends bytes; returns a preview when one is due.
    func append(_ data: Data) -> Image? {
        decoder.withLock { box -> Image? in
            guard let decoder = box.decoder else { return nil }
            do {
                try decoder.append(data)
                return try decoder.preview()?.image
            } catch {
                box.decoder = nil  // no more previews; the final decode reports the error
                return nil
            }
        }
    }
}

/// The decoder is used only inside the lock.
struct IncrementalBox: @unchecked Sendable {
    var decoder: IncrementalImageDecoder?
    init(_ decoder: IncrementalImageDecoder) { self.decoder = decoder }
}

/// The previews of one processed load waiting for the processors.
struct PreviewQueue: Sendable {
    var busy = false
    var waiting: Image?
}

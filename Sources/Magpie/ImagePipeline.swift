public import Foundation
public import Logging
public import MagpieCache
public import MagpieImage
public import MagpieNetworking
import MagpieSupport
public import CoreMetrics
import Metrics
import Synchronization

/// Turns a URL into a ready image: from memory, disk or the network, shared between every
/// caller that asks for the same thing, cancellable per caller, with progress and progressive
/// previews (YYWebImageManager, SDWebImageManager, AFImageDownloader).
///
/// ```swift
/// let pipeline = ImagePipeline(configuration: .init())
/// let image = try await pipeline.image(for: ImageRequest(url: url, processors: [.resize(width: 320)]))
///
/// let task = pipeline.loadImage(with: ImageRequest(url: url)) { result in
///     // stage .progress (previews), then once .finished or .cancelled
/// }
/// task.cancel()
/// ```
///
/// Work is shared at every stage: concurrent requests for the same data make one download;
/// for the same data and processors, one decode and one processing; other processors share
/// the download and the decode. Each caller holds its own ``ImageTask``; shared work stops
/// only when its last caller cancels, and runs at the highest priority of its callers.
///
/// Callbacks run on the pipeline's own tasks and threads, never on the main actor; a memory
/// hit in ``loadImage(with:progress:completion:)`` calls the completion before the method
/// returns, on the caller's thread (source ``ImageSource/memoryFast``).
public final class ImagePipeline: Sendable {
    /// The pipeline's settings; the defaults are written next to each property.
    public struct Configuration: Sendable {
        /// Memory and disk tiers; ``ImageCache/shared`` by default, nil for no caching.
        public var imageCache: ImageCache? = .shared
        /// Sends the requests. The process-wide AsyncHTTPClient transport by default.
        public var transport: any HTTPTransport = AsyncHTTPClientTransport.shared
        /// Downloads at once; the rest wait by priority. 6 by default; 0 means no limit.
        public var maxConcurrentDownloads = 6
        /// Among waiting downloads of equal priority, which starts first. FIFO by default.
        public var order = ExecutionOrder.fifo
        /// One download's timeout. 15 seconds by default; 0 means the default.
        public var timeout: Duration = .seconds(15)
        /// Sent with every request. `Accept: image/webp,image/*;q=0.8` by default.
        public var headers: HeaderFields = ["Accept": "image/webp,image/*;q=0.8"]
        /// Rewrites the headers of a request (URL, headers) → headers.
        public var headersFilter: (@Sendable (URL, HeaderFields) -> HeaderFields)?
        /// Makes the cache key of a URL (for example to drop a signed URL's token). When it
        /// maps several URLs to one key, one download of the first caller's URL serves them all.
        public var cacheKeyFilter: (@Sendable (URL) -> String)?
        /// Applied to requests that name no processors.
        public var sharedTransform: SharedTransform?
        /// Basic-auth credentials, used only when both user and password are set, and only for
        /// the request's own host (never after a redirect elsewhere).
        public var credentials: Credentials?
        /// The most pixels a decoded frame may have. 100 million by default.
        public var maxPixelCount = 100_000_000
        /// The most bytes a response may have. 256 MB by default; nil for no limit.
        public var maxResponseSize: Int64? = 256 << 20
        /// The bitmap budget of ``ImageOptions/scaleDownLargeImages``. 64 MB by default.
        public var scaleDownBudget = 64 << 20
        /// Decodes and processings at once. The number of cores by default.
        public var decodingWidth = ProcessInfo.processInfo.activeProcessorCount
        /// Counts requests that ask for it (``ImageOptions/showNetworkActivity``). The shared counter by default.
        public var activity: NetworkActivity? = .shared
        /// Cookies for requests that ask for them (``ImageOptions/handleCookies``).
        public var cookies = CookieStore()
        /// The shortest time between two previews of a progressive load. 100 ms by default.
        public var previewInterval: Duration = .milliseconds(100)
        /// Logs loads at debug level. Silent by default.
        public var logger: Logger?
        /// Where the pipeline's counters and decode timer go; nil (the default) uses the
        /// factory bootstrapped in `MetricsSystem`.
        public var metricsFactory: (any MetricsFactory)?

        /// A configuration; see each property for its default.
        public init() {}
    }

    /// The default pipeline: the shared cache and the default configuration.
    public static let shared = ImagePipeline(configuration: .init())

    /// The settings it was made with.
    public let configuration: Configuration

    let dataJobs = JobRegistry<FetchedData>()
    let imageJobs = JobRegistry<DecodedImage>()
    let processedJobs = JobRegistry<ImageResponse>()
    let slots: DownloadSlots
    let work: WorkQueue
    private let failedURLs = LockedValue<Set<String>>([])
    private let tasks = LockedValue<[Int: ImageTask]>([:])
    private let events = EventBroadcaster()
    private let ids = LockedValue(0)
    let metrics: PipelineMetrics
    let counts = LockedValue(Statistics())

    /// What the pipeline has done since it was made.
    public struct Statistics: Sendable, Hashable {
        /// Requests sent over the network.
        public var downloads = 0
        /// Full decodes (previews not counted).
        public var decodes = 0
        /// Processor runs on final images.
        public var processings = 0
    }

    /// What the pipeline has done since it was made.
    public var statistics: Statistics { counts.value }

    /// The memory tier, and whether keys need neither the cache-key filter nor the shared
    /// transform: read once, so a memory hit touches no configuration.
    private let memoryTier: MemoryCache<String, Image>?
    private let plainKeys: Bool

    /// A pipeline with `configuration`.
    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        metrics = PipelineMetrics(factory: configuration.metricsFactory ?? MetricsSystem.factory)
        memoryTier = configuration.imageCache?.memory
        plainKeys = configuration.cacheKeyFilter == nil && configuration.sharedTransform == nil
        slots = DownloadSlots(limit: configuration.maxConcurrentDownloads, order: configuration.order)
        work = WorkQueue(width: configuration.decodingWidth)
    }

    func nextID() -> Int {
        ids.withLock { value -> Int in
            value += 1
            return value
        }
    }

    // MARK: - Manager-wide controls

    /// The most downloads at once (0: no limit); changing it takes effect at once.
    public var maxConcurrentDownloads: Int {
        get { slots.limit }
        set { slots.limit = newValue }
    }

    /// Downloads running now.
    public var currentDownloadCount: Int { slots.running }

    /// Loads not yet ended.
    public var runningTaskCount: Int { tasks.withLock { $0.count } }

    /// Cancels every load.
    public func cancelAll() {
        for task in tasks.withLock({ Array($0.values) }) { task.cancel() }
    }

    /// Forgets the URLs remembered as failed for good.
    public func clearFailedURLs() {
        failedURLs.withLock { $0.removeAll() }
    }

    /// Whether `url` is remembered as failed for good.
    public func isFailedURL(_ url: URL) -> Bool {
        failedURLs.withLock { $0.contains(url.absoluteString) }
    }

    /// Start, response, cancel and finish events from now on.
    public var eventStream: AsyncStream<ImagePipelineEvent> { events.stream() }

    // MARK: - Keys and headers

    /// The cache key of `request`: its own override, else the cache-key filter's, else the
    /// URL's absolute string.
    public func cacheKey(for request: ImageRequest) -> String {
        if let key = request.cacheKey { return key }
        guard let url = request.url else { return "" }
        if let filter = configuration.cacheKeyFilter { return filter(url) }
        return request.urlString ?? url.absoluteString
    }

    /// The headers `request` is sent with: the configuration's, the request's, then the filter.
    public func headers(for request: ImageRequest) -> HeaderFields {
        var headers = configuration.headers
        for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) { headers[name] = value }
        guard let url = request.url, let filter = configuration.headersFilter else { return headers }
        return filter(url, headers)
    }

    /// The key of the processed image in the caches: the cache key plus the transformation.
    public func processedKey(for request: ImageRequest) -> String {
        let plainDecode = request.thumbnail == nil && request.options.isDisjoint(with: [.ignoreAnimatedImage, .scaleDownLargeImages])
        if plainKeys && plainDecode && request.processors.isEmpty {
            return request.cacheKey ?? request.urlString ?? ""  // cacheKey(for:) without a filter, read on every memory hit
        }
        let transform = transformIdentifier(for: request)
        if transform.isEmpty && plainDecode { return cacheKey(for: request) }
        var key = cacheKey(for: request)
        if !transform.isEmpty { key += "#" + transform }
        if let thumbnail = request.thumbnail { key += "#thumbnail(\(thumbnail.resize.identifier))" }
        if request.options.contains(.ignoreAnimatedImage) { key += "#firstFrame" }
        if request.options.contains(.scaleDownLargeImages) { key += "#budget(\(configuration.scaleDownBudget))" }
        return key
    }

    func transformIdentifier(for request: ImageRequest) -> String {
        if !request.processors.isEmpty { return request.processors.map(\.identifier).joined(separator: "|") }
        return configuration.sharedTransform?.identifier ?? ""
    }

    /// What makes two downloads the same: the cache key and everything that changes the request.
    func dataKey(for request: ImageRequest) -> String {
        let headers = self.headers(for: request).fields.map { "\($0.name.lowercased()):\($0.value)" }.sorted().joined(separator: "\n")
        let options = request.options
        let flags = [options.contains(.handleCookies) ? "cookies" : "", options.contains(.allowInvalidCertificates) ? "insecure" : "",
                     options.contains(.refreshCache) ? "refresh" : "", options.contains(.ignoreDiskCache) ? "nodisk" : "",
                     options.contains(.useHTTPCache) ? "http" : "", usableCredentials.map { "user:\($0.user)" } ?? ""]
        return cacheKey(for: request) + "\u{1F}" + headers + "\u{1F}" + flags.joined(separator: ",")
    }

    var usableCredentials: Credentials? {
        guard let credentials = configuration.credentials, !credentials.user.isEmpty, !credentials.password.isEmpty else { return nil }
        return credentials
    }

    // MARK: - Loading

    /// Loads the image of `request`. A memory hit returns at once, without making a task
    /// (it is counted in the metrics; it makes events only while someone listens). It runs on
    /// the caller's executor, so a memory hit asked for on the main actor never leaves it (a
    /// hop to the global executor and back costs about 100 times the lookup).
    public nonisolated(nonsending) func image(for request: ImageRequest) async throws -> Image {
        if memoryTier != nil, !events.hasListeners, let image = memoryHit(request) {
            metrics.finished(source: .memory)
            return image
        }
        return try await imageTask(with: request).image
    }

    /// The processed image of `request` in memory, when the request may use it.
    package func memoryHit(_ request: ImageRequest) -> Image? {
        guard let memory = memoryTier, request.url != nil,
              request.options.isDisjoint(with: [.refreshCache, .ignoreImageDecoding]) else { return nil }
        return memory.value(forKey: processedKey(for: request))
    }

    /// Loads the image of a URL.
    public nonisolated(nonsending) func image(for url: URL) async throws -> Image {
        try await image(for: ImageRequest(url: url))
    }

    /// Starts a load and returns its task: read ``ImageTask/response``, ``ImageTask/progress``
    /// and ``ImageTask/previews``; cancelling the enclosing Swift task does not cancel it.
    public func imageTask(with request: ImageRequest) -> ImageTask {
        start(request, callbacks: .init(), allowFast: false)
    }

    /// Loads `request` with the seeds' callbacks: `progress` with bytes, `completion` with
    /// previews (stage ``ImageStage/progress``) and then exactly once with the end; no preview
    /// comes after the end (a final result that arrives while a preview callback runs waits for
    /// it). A memory hit completes before this returns, on the caller's thread.
    @discardableResult
    public func loadImage(
        with request: ImageRequest, progress: (@Sendable (TransferProgress) -> Void)? = nil,
        completion: @escaping @Sendable (ImageTaskResult) -> Void
    ) -> ImageTask {
        start(request, callbacks: .init(progress: progress, completion: completion), allowFast: true)
    }

    private func start(_ request: ImageRequest, callbacks: ImageTask.Callbacks, allowFast: Bool) -> ImageTask {
        let task = ImageTask(id: nextID(), request: request, callbacks: callbacks) { [weak self] task, result in
            self?.ended(task, result)
        }
        guard let url = request.url, let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https" || scheme == "file", url.isFileURL || url.host != nil else {
            let text = request.url?.absoluteString ?? "no URL"
            task.complete(.failure(ImagePipelineError(.invalidURL, url: request.url, "cannot load '\(text)': an http, https or file URL is needed")))
            return task
        }
        if request.options.contains(.ignoreFailedURL) && isFailedURL(url) {
            task.complete(.failure(ImagePipelineError(.failedURL, url: url, "this URL failed before and the request skips failed URLs")))
            return task
        }
        let decodes = !request.options.contains(.ignoreImageDecoding)
        let processed = processedKey(for: request)
        if decodes && !request.options.contains(.refreshCache), let image = memoryTier?.value(forKey: processed) {
            tasks.withLock { $0[task.id] = task }
            events.send(.started(task))
            task.complete(.success(ImageResponse(image: image, data: nil, url: url, source: allowFast ? .memoryFast : .memory)))
            return task
        }
        tasks.withLock { $0[task.id] = task }
        events.send(.started(task))
        configuration.logger?.debug("load", metadata: ["url": "\(url.absoluteString)", "task": "\(task.id)"])

        let subscriber = task.id
        let keys = LoadKeys(pipeline: self, request: request, processed: processed)
        if decodes {
            let job = processedJobs.subscribe(
                key: keys.processedJob, id: subscriber,
                .init(priority: request.priority, wantsChunks: false) { [weak task] event in
                    guard let task else { return }
                    switch event {
                    case .progress(let progress): task.report(progress)
                    case .preview(let image): task.preview(image)
                    case .chunk: break
                    case .value(let response): task.complete(.success(response))
                    case .failure(let error): task.complete(.failure(error))
                    }
                },
                work: { [self] job in await processedWork(job, request: request, url: url, keys: keys) })
            task.attach(detach: { job.remove(subscriber) }, prioritize: { job.setPriority($0, for: subscriber) })
        } else {
            let job = dataJobs.subscribe(
                key: keys.data, id: subscriber,
                .init(priority: request.priority, wantsChunks: false) { [weak task] event in
                    guard let task else { return }
                    switch event {
                    case .progress(let progress): task.report(progress)
                    case .value(let fetched):
                        task.complete(.success(ImageResponse(image: nil, data: fetched.data, url: url, source: fetched.source,
                                                             status: fetched.status, headers: fetched.headers)))
                    case .failure(let error): task.complete(.failure(error))
                    case .chunk, .preview: break
                    }
                },
                work: { [self] job in await dataWork(job, request: request, url: url, keys: keys) })
            task.attach(detach: { job.remove(subscriber) }, prioritize: { job.setPriority($0, for: subscriber) })
        }
        return task
    }

    private func ended(_ task: ImageTask, _ result: Result<ImageResponse, ImagePipelineError>) {
        tasks.withLock { _ = $0.removeValue(forKey: task.id) }
        switch result {
        case .success(let response):
            metrics.finished(source: response.source)
            events.send(.finished(task, .success(response.source)))
        case .failure(let error) where error.kind == .cancelled:
            metrics.cancelled()
            events.send(.cancelled(task))
        case .failure(let error):
            metrics.failed()
            if task.request.options.contains(.ignoreFailedURL), !error.isTransient, error.kind != .failedURL, let url = task.request.url {
                failedURLs.withLock { _ = $0.insert(url.absoluteString) }
            }
            events.send(.finished(task, .failure(error)))
        }
    }

    func responseReceived(_ url: URL, status: Int) {
        events.send(.responseReceived(url, status))
    }

    func decodeKey(for request: ImageRequest, dataKey: String) -> String {
        var key = dataKey
        if let thumbnail = request.thumbnail { key += "\u{1F}thumb:\(thumbnail.resize.identifier)" }
        if request.options.contains(.ignoreAnimatedImage) { key += "\u{1F}first" }
        if request.options.contains(.scaleDownLargeImages) { key += "\u{1F}budget" }
        if request.options.contains(.progressive) { key += "\u{1F}progressive" }
        if request.options.contains(.progressiveBlur) { key += "\u{1F}blur" }
        return key
    }
}

/// Something a pipeline did, for whoever observes it (the seeds' notifications).
public enum ImagePipelineEvent: Sendable {
    /// A task started.
    case started(ImageTask)
    /// A response head arrived for a download (URL, status).
    case responseReceived(URL, Int)
    /// A task was cancelled.
    case cancelled(ImageTask)
    /// A task finished, with where its image came from or why it failed.
    case finished(ImageTask, Result<ImageSource, ImagePipelineError>)
}

/// Fans events out to every stream made by ``ImagePipeline/eventStream``.
final class EventBroadcaster: Sendable {
    private let streams = LockedValue<[Int: AsyncStream<ImagePipelineEvent>.Continuation]>([:])
    private let ids = LockedValue(0)
    private let listeners = Atomic<Int>(0)

    /// Whether any stream is open (read without a lock, for the memory-hit fast path).
    var hasListeners: Bool { listeners.load(ordering: .relaxed) > 0 }

    func stream() -> AsyncStream<ImagePipelineEvent> {
        AsyncStream(bufferingPolicy: .bufferingNewest(10_000)) { continuation in
            let id = ids.withLock { value -> Int in
                value += 1
                return value
            }
            streams.withLock { $0[id] = continuation }
            listeners.add(1, ordering: .relaxed)
            continuation.onTermination = { [weak self] _ in
                guard let self else { return }
                if self.streams.withLock({ $0.removeValue(forKey: id) }) != nil { self.listeners.subtract(1, ordering: .relaxed) }
            }
        }
    }

    func send(_ event: ImagePipelineEvent) {
        let targets = streams.withLock { Array($0.values) }
        for target in targets { target.yield(event) }
    }
}

/// swift-metrics counters: loads by source, failures, cancellations, bytes downloaded, decode time.
struct PipelineMetrics: Sendable {
    private let memory: Counter
    private let disk: Counter
    private let remote: Counter
    private let failures: Counter
    private let cancellations: Counter
    private let bytes: Counter
    private let decodeTime: Timer

    init(factory: any MetricsFactory) {
        let loads = "magpie_pipeline_loads_total"
        memory = Counter(label: loads, dimensions: [("source", "memory")], factory: factory)
        disk = Counter(label: loads, dimensions: [("source", "disk")], factory: factory)
        remote = Counter(label: loads, dimensions: [("source", "remote")], factory: factory)
        failures = Counter(label: "magpie_pipeline_failures_total", factory: factory)
        cancellations = Counter(label: "magpie_pipeline_cancellations_total", factory: factory)
        bytes = Counter(label: "magpie_pipeline_bytes_downloaded_total", factory: factory)
        decodeTime = Timer(label: "magpie_pipeline_decode_seconds", factory: factory)
    }

    func downloaded(_ count: Int) { bytes.increment(by: count) }

    func decoded(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        decodeTime.recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    func finished(source: ImageSource) {
        switch source {
        case .memoryFast, .memory: memory.increment()
        case .disk: disk.increment()
        case .remote: remote.increment()
        }
    }

    func failed() { failures.increment() }
    func cancelled() { cancellations.increment() }
}

/// The keys of one load, made once when it starts and handed down to each stage.
struct LoadKeys: Sendable {
    /// The cache key: the original bytes' key on disk.
    let cache: String
    /// The processed image's key in the caches.
    let processed: String
    /// What makes two downloads the same.
    let data: String
    /// What makes two decodes the same.
    let decode: String
    /// What makes two processings the same.
    let processedJob: String

    init(pipeline: ImagePipeline, request: ImageRequest, processed: String) {
        cache = pipeline.cacheKey(for: request)
        self.processed = processed
        data = pipeline.dataKey(for: request)
        decode = pipeline.decodeKey(for: request, dataKey: data)
        processedJob = decode + "\u{1F}" + pipeline.transformIdentifier(for: request)
    }
}

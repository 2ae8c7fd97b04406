public import Foundation
public import Logging
import MagpieSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Downloads files with resume (SJNetworkDownloadEngine), which URLSession cannot do on Linux.
///
/// Partial bytes go to a side file as they arrive, with a small JSON record (URL, total length,
/// ETag, Last-Modified) written before the first byte, so a download interrupted by a dropped
/// connection, a suspend, a cancel or even a killed process continues from what is on disk:
/// the next attempt sends `Range` with `If-Range`, appends on a 206 and starts again from zero
/// on a 200 (the file changed). Dropped connections are retried with backoff on their own.
///
/// ```swift
/// let task = try client.downloads.download("https://example.com/big.iso", to: file)
/// let result = try await task.result()
/// ```
public final class DownloadManager: Sendable {
    /// The manager's settings; the defaults are written next to each property.
    public struct Configuration: Sendable {
        /// Sends the requests. The process-wide AsyncHTTPClient transport by default.
        public var transport: any HTTPTransport = AsyncHTTPClientTransport.shared
        /// Downloads running at once; the rest wait in the ``DownloadState/queued`` state. 4 by default.
        public var maxConcurrentDownloads = 4
        /// Where partial data and records are kept; nil (the default) keeps them next to each
        /// destination (`file.magpie-partial`, `file.magpie-resume.json`).
        public var resumeDirectory: URL?
        /// Relative paths resolve against this. None by default.
        public var baseURL: URL?
        /// Sent with every download. None by default.
        public var headers: HeaderFields = [:]
        /// Registers every download.
        public var pool = RequestPool()
        /// Counts running downloads (suspended and queued ones do not count). The shared counter by default.
        public var activity: NetworkActivity? = .shared
        /// Logs starts, resumes, restarts, retries and ends at debug level. Silent by default.
        public var logger: Logger?

        /// A configuration; see each property for its default.
        public init() {}
    }

    private struct State {
        var active: [ObjectIdentifier: DownloadTask] = [:]
        var running = 0
        var queue: [DownloadTask] = []
    }

    private let configuration: Configuration
    private let state = LockedValue(State())
    private let resolve: @Sendable (String, Bool) throws -> URL
    private let liveHeaders: @Sendable () -> HeaderFields

    /// A manager on its own.
    public convenience init(configuration: Configuration = .init()) {
        let base = configuration.baseURL, headers = configuration.headers
        self.init(configuration: configuration, resolve: { path, ignoresBase in
            try DownloadManager.resolve(path, base: ignoresBase ? nil : base)
        }, headers: { headers })
    }

    /// A manager that takes its base URL and headers from a client as they are when each
    /// download starts.
    init(configuration: Configuration, resolve: @escaping @Sendable (String, Bool) throws -> URL,
         headers: @escaping @Sendable () -> HeaderFields) {
        self.configuration = configuration
        self.resolve = resolve
        self.liveHeaders = headers
        if let directory = configuration.resumeDirectory {
            try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
    }

    static func resolve(_ path: String, base: URL?) throws -> URL {
        guard let url = URL(string: path, relativeTo: base)?.absoluteURL,
              let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw NetworkError.invalidURL(path)
        }
        return url
    }

    /// The request pool the downloads are registered in.
    public var pool: RequestPool { configuration.pool }

    /// Downloads not yet completed, failed or cancelled (queued, running and suspended).
    public var tasks: [DownloadTask] { state.withLock { Array($0.active.values) } }

    /// Starts downloading `path` (resolved against the base URL unless the options say not)
    /// to `destination`. When the same URL is already downloading to the same destination,
    /// that task is returned.
    public func download(_ path: String, to destination: URL, options: DownloadOptions = .init()) throws -> DownloadTask {
        let url = try resolve(path, options.ignoresBaseURL)
        let destination = destination.standardizedFileURL
        try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        let files = ResumeFiles(url: url, destination: destination, directory: configuration.resumeDirectory)
        let made = DownloadTask(url: url, destination: destination, options: options, files: files, manager: self)
        let (task, isNew) = state.withLock { state -> (DownloadTask, Bool) in
            if let existing = state.active.values.first(where: { $0.url == url && $0.destination == destination }) {
                return (existing, false)
            }
            state.active[ObjectIdentifier(made)] = made
            return (made, true)
        }
        guard isNew else { return task }
        if !options.resumable { files.removeAll() }
        let id = configuration.pool.register({ id in
            RequestPool.Entry(id: id, kind: .download, method: .get, url: url, parameters: [:], state: .queued,
                              cacheSettings: options.resumable ? "resumable" : "not resumable",
                              identifier: ResponseCache.key(url: url, method: .get, parameters: [:]))
        }, cancel: { [weak task] in task?.cancel() })
        task.state.withLock { $0.poolID = id }
        enqueue(task)
        return task
    }

    // MARK: - Several at once

    /// Suspends the downloads of these URLs; returns how many.
    @discardableResult
    public func suspend(urls: [URL]) -> Int { each(urls) { $0.suspend() } }

    /// Resumes the suspended downloads of these URLs; returns how many.
    @discardableResult
    public func resume(urls: [URL]) -> Int { each(urls) { $0.resume() } }

    /// Cancels the downloads of these URLs; returns how many.
    @discardableResult
    public func cancel(urls: [URL], discardingPartialData: Bool = false) -> Int {
        each(urls) { $0.cancel(discardingPartialData: discardingPartialData) }
    }

    /// Suspends every download.
    public func suspendAll() { for task in tasks { task.suspend() } }

    /// Resumes every suspended download.
    public func resumeAll() { for task in tasks { task.resume() } }

    /// Cancels every download.
    public func cancelAll(discardingPartialData: Bool = false) {
        for task in tasks { task.cancel(discardingPartialData: discardingPartialData) }
    }

    private func each(_ urls: [URL], _ body: (DownloadTask) -> Void) -> Int {
        let wanted = Set(urls.map(\.absoluteString))
        let chosen = tasks.filter { wanted.contains($0.url.absoluteString) }
        for task in chosen { body(task) }
        return chosen.count
    }

    // MARK: - Scheduling

    private func enqueue(_ task: DownloadTask) {
        let startNow = state.withLock { state -> Bool in
            if state.running < max(1, configuration.maxConcurrentDownloads) {
                state.running += 1
                return true
            }
            state.queue.append(task)
            return false
        }
        if startNow { start(task) } else { setPoolState(task, .queued) }
    }

    private func start(_ task: DownloadTask) {
        let begun = task.state.withLock { state -> Bool in
            guard state.phase == .queued else { return false }
            state.phase = .running
            state.run += 1
            let run = state.run
            let previous = state.runner
            state.runner = Task {
                await previous?.value  // a suspended run finishes writing before the next begins
                await self.run(task, run: run)
            }
            return true
        }
        if begun {
            setPoolState(task, .running)
        } else {
            slotFreed()
        }
    }

    /// A slot came free: start the next queued download still waiting.
    private func slotFreed() {
        let next = state.withLock { state -> DownloadTask? in
            while !state.queue.isEmpty {
                let candidate = state.queue.removeFirst()
                if candidate.phase == .queued { return candidate }
            }
            state.running = max(0, state.running - 1)
            return nil
        }
        if let next { start(next) }
    }

    private func setPoolState(_ task: DownloadTask, _ value: RequestPool.State) {
        if let id = task.state.withLock({ $0.poolID }) { configuration.pool.setState(id, value) }
    }

    func suspend(_ task: DownloadTask) {
        let (runner, wasQueued) = task.state.withLock { state -> (Task<Void, Never>?, Bool) in
            guard state.phase == .running || state.phase == .queued else { return (nil, false) }
            let queued = state.phase == .queued
            state.phase = .suspended
            return (queued ? nil : state.runner, queued)
        }
        runner?.cancel()
        if wasQueued || runner != nil {
            setPoolState(task, .suspended)
            configuration.logger?.debug("download suspended", metadata: ["url": "\(task.url.absoluteString)"])
        }
    }

    func resume(_ task: DownloadTask) {
        let resumed = task.state.withLock { state -> Bool in
            guard state.phase == .suspended else { return false }
            state.phase = .queued
            return true
        }
        if resumed { enqueue(task) }
    }

    func cancel(_ task: DownloadTask, discarding: Bool) {
        let ended = task.state.withLock { state -> (Task<Void, Never>?, [CheckedContinuation<DownloadResult, any Error>], UInt64?)? in
            guard state.phase != .completed && state.phase != .failed else { return nil }
            state.phase = .failed
            let keeps = task.options.resumable && !discarding
            let error = NetworkError(.cancelled, url: task.url, "the download was cancelled")
                .keeping(keeps ? task.files.partial : nil, progress: state.progress)
            state.result = .failure(error)
            defer { state.waiters = [] }
            return (state.runner, state.waiters, state.poolID)
        }
        guard let (runner, waiters, poolID) = ended else { return }
        runner?.cancel()
        if discarding || !task.options.resumable {
            // Remove the files once the run has stopped writing.
            Task {
                await runner?.value
                task.files.removeAll()
            }
        }
        if let poolID { configuration.pool.unregister(poolID) }
        state.withLock { _ = $0.active.removeValue(forKey: ObjectIdentifier(task)) }
        for waiter in waiters { waiter.resume(throwing: task.error ?? NetworkError(.cancelled, url: task.url, "cancelled")) }
    }

    // MARK: - Running

    private func run(_ task: DownloadTask, run: Int) async {
        configuration.activity?.increment()
        let outcome = await perform(task)
        configuration.activity?.decrement()
        let finished = task.state.withLock { state -> ([CheckedContinuation<DownloadResult, any Error>], UInt64?)? in
            // A suspend or cancel already decided this run's fate.
            guard state.run == run, state.phase == .running else { return nil }
            state.phase = (try? outcome.get()) != nil ? .completed : .failed
            state.result = outcome
            defer { state.waiters = [] }
            return (state.waiters, state.poolID)
        }
        if let (waiters, poolID) = finished {
            if let poolID { configuration.pool.unregister(poolID) }
            state.withLock { _ = $0.active.removeValue(forKey: ObjectIdentifier(task)) }
            for waiter in waiters { waiter.resume(with: outcome.mapError { $0 as any Error }) }
            switch outcome {
            case .success(let result):
                configuration.logger?.debug("download completed", metadata: [
                    "url": "\(task.url.absoluteString)", "bytes": "\(result.bytes)", "resumedFrom": "\(result.resumedFrom)",
                ])
            case .failure(let error):
                configuration.logger?.debug("download failed", metadata: ["url": "\(task.url.absoluteString)", "error": "\(error)"])
            }
        }
        slotFreed()
    }

    /// Attempts until done, retrying what can be retried.
    private func perform(_ task: DownloadTask) async -> Result<DownloadResult, NetworkError> {
        var attempts = 0
        var restarts = 0
        var rangeFailures = 0
        while true {
            attempts += 1
            do {
                var result = try await attempt(task, restarts: &restarts)
                result.attempts = attempts
                return .success(result)
            } catch {
                var failure = AsyncHTTPClientTransport.mapError(error, url: task.url)
                if Task.isCancelled { failure = NetworkError(.cancelled, url: task.url, "the download was cancelled") }
                if failure.kind == .rangeNotSatisfiable && rangeFailures == 0 && failure.status == 416 {
                    // What is stored cannot be continued: drop it and start again once.
                    rangeFailures += 1
                    restarts += 1
                    task.files.removeAll()
                    configuration.logger?.debug("range refused, starting again", metadata: ["url": "\(task.url.absoluteString)"])
                    continue
                }
                let retryable = [.connectionFailed, .timeout].contains(failure.kind)
                    || (failure.kind == .unacceptableStatus && [408, 429, 500, 502, 503, 504].contains(failure.status ?? 0))
                if retryable && attempts <= task.options.maxRetries && !Task.isCancelled {
                    let delay = task.options.retryDelay * (1 << min(attempts - 1, 10))
                    configuration.logger?.debug("download retrying", metadata: [
                        "url": "\(task.url.absoluteString)", "attempt": "\(attempts + 1)", "after": "\(delay)", "error": "\(failure)",
                    ])
                    try? await Task.sleep(for: delay)
                    if !Task.isCancelled { continue }
                    failure = NetworkError(.cancelled, url: task.url, "the download was cancelled")
                }
                if task.options.resumable {
                    return .failure(failure.keeping(task.files.partialLength > 0 ? task.files.partial : nil, progress: task.files.kept))
                }
                task.files.removeAll()
                return .failure(failure)
            }
        }
    }

    /// One request: continues from the stored bytes when it can.
    private func attempt(_ task: DownloadTask, restarts: inout Int) async throws -> DownloadResult {
        let files = task.files
        let record = task.options.resumable ? files.readRecord() : nil
        var offset: Int64 = 0
        if let record, record.url == task.url.absoluteString, record.destination == task.destination.path {
            offset = files.partialLength
            if record.totalLength >= 0 && offset > record.totalLength { offset = 0 }
        }

        var request = TransportRequest(url: task.url)
        request.headers = liveHeaders().merging(task.options.headers)
        request.timeout = task.options.timeout
        request.allowsInvalidCertificates = task.options.allowsInvalidCertificates
        if offset > 0 {
            request.headers["Range"] = "bytes=\(offset)-"
            if let validator = record?.rangeValidator { request.headers["If-Range"] = validator }
        }
        configuration.logger?.debug(offset > 0 ? "download resuming" : "download starting", metadata: [
            "url": "\(task.url.absoluteString)", "offset": "\(offset)",
        ])
        let response = try await configuration.transport.send(request)

        var start: Int64 = 0
        var total = response.expectedLength
        switch response.status {
        case 206:
            guard let range = ContentRange(response.headers["Content-Range"]), let first = range.first,
                  first == offset || first == 0 else {
                throw NetworkError(.connectionFailed, url: task.url, "the server sent a range that was not asked for")
            }
            if let record, offset > 0, record.totalLength >= 0, range.total >= 0, record.totalLength != range.total {
                // No validator caught it, but the length changed: the file is another one now.
                files.removeAll()
                restarts += 1
                throw NetworkError(.connectionFailed, url: task.url, "the file changed on the server; starting again")
            }
            start = first
            total = range.total
        case 200..<300:
            if offset > 0 {
                restarts += 1
                configuration.logger?.debug("the server sent the whole file; starting again from zero", metadata: [
                    "url": "\(task.url.absoluteString)",
                ])
            }
        case 416:
            let known = ContentRange(response.headers["Content-Range"])?.total ?? record?.totalLength ?? -1
            if offset > 0 && known == offset {
                // Everything was already here.
                return try finish(task, bytes: offset, resumedFrom: offset, restarts: restarts)
            }
            throw NetworkError(
                .rangeNotSatisfiable, url: task.url,
                "the server cannot send bytes from \(offset) on (416 Range Not Satisfiable)", status: 416)
        default:
            var body = Data()
            do {
                for try await chunk in response.body {
                    body.append(chunk.prefix(max(0, 65_536 - body.count)))
                    if body.count >= 65_536 { break }
                }
            } catch {}
            throw NetworkError.unacceptableStatus(response.status, url: response.url, body: body)
        }

        var current = ResumeRecord(
            url: task.url.absoluteString, destination: task.destination.path, totalLength: total,
            etag: response.headers["ETag"], lastModified: response.headers["Last-Modified"], receivedLength: start,
            updatedAt: Date().timeIntervalSince1970)
        if task.options.resumable { try files.write(current) }  // before the first byte
        let file = try PartialFile(files.partial, truncate: start == 0)
        if start > 0 { try file.truncate(to: start) }

        var received = start
        var recorded = start
        report(task, TransferProgress(completed: received, expected: total))
        for try await chunk in response.body {
            try file.append(chunk)
            received += Int64(chunk.count)
            if total >= 0 && received > total {
                throw NetworkError(.connectionFailed, url: task.url, "the server sent more than the \(total) bytes it announced")
            }
            report(task, TransferProgress(completed: received, expected: total))
            if task.options.resumable && received - recorded >= 8 << 20 {
                current.receivedLength = received
                current.updatedAt = Date().timeIntervalSince1970
                try? files.write(current)
                recorded = received
            }
        }
        try Task.checkCancellation()
        if total >= 0 && received < total {
            throw NetworkError(.connectionFailed, url: task.url, "the connection ended after \(received) of \(total) bytes")
        }
        return try finish(task, bytes: received, resumedFrom: start, restarts: restarts)
    }

    private func report(_ task: DownloadTask, _ progress: TransferProgress) {
        task.state.withLock { $0.progress = progress }
        task.options.onProgress?(progress)
    }

    /// Moves the complete partial file into place and forgets the record.
    private func finish(_ task: DownloadTask, bytes: Int64, resumedFrom: Int64, restarts: Int) throws -> DownloadResult {
        let files = task.files
        if !FileManager.default.fileExists(atPath: files.partial.path) {
            _ = FileManager.default.createFile(atPath: files.partial.path, contents: nil)  // an empty body
        }
        if rename(files.partial.path, task.destination.path) != 0 {
            // Another file system (a separate resume directory): copy, then remove.
            do {
                if FileManager.default.fileExists(atPath: task.destination.path) {
                    try FileManager.default.removeItem(at: task.destination)
                }
                try FileManager.default.copyItem(at: files.partial, to: task.destination)
            } catch {
                throw NetworkError(.fileFailed, url: task.url, "cannot move the download to \(task.destination.path): \(error)")
            }
        }
        files.removeAll()
        return DownloadResult(file: task.destination, bytes: bytes, resumedFrom: resumedFrom, attempts: 1, restarts: restarts)
    }
}

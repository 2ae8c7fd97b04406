public import Foundation
import MagpieSupport

/// Loads URLs ahead of need at low priority, into the disk cache (bytes only, no decoding) or
/// into memory (decoded), so that later loads are cache hits (SDWebImagePrefetcher).
///
/// ```swift
/// let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
/// prefetcher.start(with: nextPageURLs)
/// await prefetcher.wait()          // or prefetcher.stop(with:) / stopAll()
/// ```
public final class ImagePrefetcher: Sendable {
    /// Where prefetched images end up.
    public enum Destination: Sendable {
        /// The disk tier only: downloaded, not decoded.
        case diskCache
        /// Decoded into memory (and disk).
        case memoryCache
    }

    /// The pipeline it loads through.
    public let pipeline: ImagePipeline
    /// Where the images go.
    public let destination: Destination
    /// The priority of its loads. Very low by default.
    public let priority: ImagePriority
    private let tasks = LockedValue<[String: ImageTask]>([:])
    private let outcomes = LockedValue<(done: Int, failed: Int)>((0, 0))

    /// A prefetcher on `pipeline`.
    public init(pipeline: ImagePipeline = .shared, destination: Destination = .diskCache, priority: ImagePriority = .veryLow) {
        self.pipeline = pipeline
        self.destination = destination
        self.priority = priority
    }

    /// Starts prefetching `urls` not already being prefetched.
    public func start(with urls: [URL]) {
        for url in urls {
            let key = url.absoluteString
            let isNew = tasks.withLock { tasks -> Bool in
                guard tasks[key] == nil else { return false }
                return true
            }
            guard isNew else { continue }
            let options: ImageOptions = destination == .diskCache ? [.ignoreImageDecoding] : []
            let task = pipeline.loadImage(with: ImageRequest(url: url, priority: priority, options: options)) { [weak self] result in
                guard result.stage != .progress, let self else { return }
                self.tasks.withLock { _ = $0.removeValue(forKey: key) }
                self.outcomes.withLock { outcomes in
                    if result.error == nil { outcomes.done += 1 } else if result.stage == .finished { outcomes.failed += 1 }
                }
            }
            // Under the lock the callback removes with: a task that ends in between is never kept.
            tasks.withLock { if task.state == .running { $0[key] = task } }
        }
    }

    /// Stops prefetching these URLs.
    public func stop(with urls: [URL]) {
        let chosen = tasks.withLock { tasks in urls.compactMap { tasks.removeValue(forKey: $0.absoluteString) } }
        for task in chosen { task.cancel() }
    }

    /// Stops every prefetch.
    public func stopAll() {
        let all = tasks.withLock { tasks -> [ImageTask] in
            defer { tasks = [:] }
            return Array(tasks.values)
        }
        for task in all { task.cancel() }
    }

    /// Prefetches still running.
    public var pendingCount: Int { tasks.withLock { $0.count } }

    /// Finished prefetches so far: succeeded and failed.
    public var completed: (succeeded: Int, failed: Int) { outcomes.withLock { ($0.done, $0.failed) } }

    /// Waits until no prefetch is running.
    public func wait() async {
        while pendingCount > 0 { try? await Task.sleep(for: .milliseconds(10)) }
    }
}

import Foundation
@testable import Magpie
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import MetricsTestKit
import Testing

@Suite("Image pipeline: coalescing, cancellation, scheduling")
struct PipelineCoalescingTests {
    @Test("Concurrent requests for one URL make exactly one origin request")
    func oneDownload() async throws {
        try await withPipeline { pipeline, origin, _ in
            origin.setFile("a", try TestImages.jpeg(), etag: "a")
            let url = origin.url("/file/a?pace=5&chunk=2048")
            let sizes = try await withThrowingTaskGroup(of: PixelSize.self) { group in
                for _ in 0..<20 { group.addTask { try await pipeline.image(for: url).size } }
                return try await group.reduce(into: [PixelSize]()) { $0.append($1) }
            }
            #expect(sizes.count == 20)
            #expect(Set(sizes) == [PixelSize(width: 240, height: 160)])
            #expect(origin.hits("/file/a") == 1)
            #expect(pipeline.statistics.downloads == 1)
            #expect(pipeline.statistics.decodes == 1)
        }
    }

    @Test("Different processors share the download and the decode; the same processors share the processing")
    func sharedDecode() async throws {
        try await withPipeline { pipeline, origin, _ in
            origin.setFile("b", try TestImages.jpeg(), etag: "b")
            let url = origin.url("/file/b?pace=5&chunk=2048")
            let widths = [60, 80, 100, 60, 80, 100]
            let results = try await withThrowingTaskGroup(of: Int.self) { group in
                for width in widths {
                    group.addTask {
                        try await pipeline.image(for: ImageRequest(url: url, processors: [.resize(width: width)])).width
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(results.sorted() == widths.sorted())
            #expect(origin.hits("/file/b") == 1)
            #expect(pipeline.statistics.decodes == 1)
            #expect(pipeline.statistics.processings == 3)
        }
    }

    @Test("Cancelling all but one: the survivor completes, the others report cancelled exactly once")
    func cancelAllButOne() async throws {
        try await withPipeline { pipeline, origin, _ in
            origin.setFile("c", try TestImages.jpeg(), etag: "c")
            let url = origin.url("/file/c?pace=20&chunk=1024")
            let logs = (0..<5).map { _ in CallbackLog() }
            let tasks = logs.map { log in pipeline.loadImage(with: ImageRequest(url: url)) { log.record($0) } }
            try await Task.sleep(for: .milliseconds(100))
            for task in tasks.dropFirst() { task.cancel() }
            for task in tasks.dropFirst() { task.cancel() }  // twice: still one callback
            let image = try await tasks[0].image
            #expect(image.width == 240)
            try await Task.sleep(for: .milliseconds(50))
            #expect(logs[0].ends.map(\.stage) == [.finished])
            #expect(logs[0].ends.first?.source == .remote)
            for log in logs.dropFirst() {
                #expect(log.ends.map(\.stage) == [.cancelled])
                #expect(log.ends.first?.error?.kind == .cancelled)
            }
            #expect(tasks.dropFirst().allSatisfy { $0.state == .cancelled })
            #expect(origin.hits("/file/c") == 1)
        }
    }

    @Test("Cancelling every caller stops the download: the origin sees the connection closed")
    func cancelAllClosesConnection() async throws {
        try await withPipeline { pipeline, origin, _ in
            origin.setFile("d", Data(count: 2_000_000), etag: "d")
            let url = origin.url("/file/d?pace=10&chunk=4096")
            let tasks = (0..<3).map { _ in pipeline.imageTask(with: ImageRequest(url: url)) }
            #expect(await eventually { origin.count("paced-active") == 1 })
            pipeline.cancelAll()
            #expect(await eventually { origin.count("paced-closed") == 1 })
            for task in tasks {
                await #expect(throws: ImagePipelineError.self) { try await task.response }
            }
            #expect(await eventually { pipeline.runningTaskCount == 0 && pipeline.currentDownloadCount == 0 })
        }
    }

    @Test("Queued downloads start by priority; a priority raised while waiting counts")
    func priorities() async throws {
        try await withPipeline(configure: { $0.maxConcurrentDownloads = 1 }) { pipeline, origin, _ in
            let data = try TestImages.png(size: 16)
            for name in ["low", "high", "normal", "raised"] { origin.setFile(name, data, etag: name) }
            // Holds the only slot for about 400 ms: 4 chunks 100 ms apart.
            origin.setFile("block", Data(count: 400), etag: "block")
            let blocker = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/block?pace=100&chunk=100")))
            #expect(await eventually { pipeline.currentDownloadCount == 1 })
            let low = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/low"), priority: .low))
            let raised = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/raised"), priority: .veryLow))
            let high = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/high"), priority: .high))
            let normal = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/normal"), options: []))
            try await Task.sleep(for: .milliseconds(50))
            raised.priority = .veryHigh
            _ = try? await blocker.response
            for task in [low, raised, high, normal] { _ = try await task.response }
            let order = origin.requestLog.map { String($0.split(separator: "/").last ?? "") }.filter { !$0.hasPrefix("block") }
            #expect(order == ["raised", "high", "normal", "low"])
        }
    }

    @Test("FIFO and LIFO order among equal priorities", arguments: [ExecutionOrder.fifo, .lifo])
    func order(_ order: ExecutionOrder) async throws {
        try await withPipeline(configure: { $0.maxConcurrentDownloads = 1; $0.order = order }) { pipeline, origin, _ in
            let data = try TestImages.png(size: 16)
            for name in ["a", "b", "c"] { origin.setFile(name, data, etag: name) }
            origin.setFile("block", Data(count: 400), etag: "block")
            let blocker = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/block?pace=100&chunk=100")))
            #expect(await eventually { pipeline.currentDownloadCount == 1 })
            var tasks: [ImageTask] = []
            for name in ["a", "b", "c"] {
                tasks.append(pipeline.imageTask(with: ImageRequest(url: origin.url("/file/\(name)"))))
                try await Task.sleep(for: .milliseconds(5))
            }
            _ = try? await blocker.response
            for task in tasks { _ = try await task.response }
            let seen = origin.requestLog.map { String($0.split(separator: "/").last ?? "") }.filter { !$0.hasPrefix("block") }
            #expect(seen == (order == .fifo ? ["a", "b", "c"] : ["c", "b", "a"]))
        }
    }

    @Test("The concurrency limit is never passed, and can change while running")
    func concurrencyLimit() async throws {
        try await withPipeline(configure: { $0.maxConcurrentDownloads = 2 }) { pipeline, origin, _ in
            let data = try TestImages.png(size: 32)
            for i in 0..<10 { origin.setFile("l\(i)", data, etag: "l\(i)") }
            let tasks = (0..<10).map { pipeline.imageTask(with: ImageRequest(url: origin.url("/file/l\($0)?pace=20&chunk=256"))) }
            #expect(await eventually { pipeline.currentDownloadCount == 2 })
            for task in tasks.prefix(5) { _ = try await task.response }
            #expect(origin.count("paced-max") <= 2)
            pipeline.maxConcurrentDownloads = 4
            for task in tasks.suffix(5) { _ = try await task.response }
            #expect(origin.count("paced-max") <= 4)
            #expect(origin.count("paced-max") >= 2)
        }
    }

    @Test("Credentials are sent only when both user and password are set")
    func credentials() async throws {
        try await withPipeline(configure: { $0.credentials = Credentials(user: "u", password: "p") }) { pipeline, origin, _ in
            origin.setFile("c", try TestImages.png(size: 16), etag: "c")
            _ = try await pipeline.image(for: origin.url("/file/c"))
            #expect(origin.requests.last?.headers["authorization"] == "Basic dTpw")
        }
        try await withPipeline(configure: { $0.credentials = Credentials(user: "u", password: "") }) { pipeline, origin, _ in
            origin.setFile("d", try TestImages.png(size: 16), etag: "d")
            _ = try await pipeline.image(for: origin.url("/file/d"))
            #expect(origin.requests.count == 1)
            #expect(origin.requests.last?.headers["authorization"] == nil)
        }
    }

    @Test("lowPriority and highPriority set the priority; handleCookies and showNetworkActivity apply only when asked")
    func requestOptions() async throws {
        #expect(ImageRequest(url: URL(string: "http://a.test/x"), options: .lowPriority).priority == .low)
        #expect(ImageRequest(url: URL(string: "http://a.test/x"), options: .highPriority).priority == .high)
        let cookies = CookieStore()
        let activity = NetworkActivity()
        try await withPipeline(configure: { $0.cookies = cookies; $0.activity = activity }) { pipeline, origin, _ in
            _ = try await pipeline.imageTask(with: ImageRequest(url: origin.url("/set-cookie?name=plain&value=1"), options: .ignoreImageDecoding)).response
            #expect(cookies.all.isEmpty)
            _ = try await pipeline.imageTask(with: ImageRequest(url: origin.url("/set-cookie?name=kept&value=2"), options: [.ignoreImageDecoding, .handleCookies])).response
            #expect(cookies.all.map(\.name) == ["kept"])

            origin.setFile("k", try TestImages.png(size: 16), etag: "k")
            let quiet = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/k?pace=20&chunk=64")))
            #expect(await eventually { pipeline.currentDownloadCount == 1 })
            #expect(activity.count == 0)
            _ = try await quiet.response
            #expect(origin.requests.last?.headers["cookie"] == nil)

            origin.setFile("l", try TestImages.png(size: 16), etag: "l")
            let shown = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/l?pace=20&chunk=64"), options: [.showNetworkActivity, .handleCookies]))
            #expect(await eventually { activity.count == 1 })
            _ = try await shown.response
            #expect(await eventually { activity.count == 0 })
            #expect(origin.requests.last?.headers["cookie"] == "kept=2")
        }
    }

    @Test("Metrics: loads by source, failures, cancellations, bytes downloaded and decode time")
    func metrics() async throws {
        let metrics = TestMetrics()
        try await withPipeline(configure: { $0.metricsFactory = metrics }) { pipeline, origin, _ in
            let bytes = try TestImages.png(size: 16)
            origin.setFile("m", bytes, etag: "m")
            _ = try await pipeline.image(for: origin.url("/file/m"))  // remote
            _ = try await pipeline.image(for: origin.url("/file/m"))  // memory, through the fast path
            _ = try? await pipeline.image(for: origin.url("/status/404"))
            origin.setFile("slow", Data(count: 4000), etag: "slow")
            let task = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/slow?pace=50&chunk=100")))
            task.cancel()
            _ = try? await task.response
            let loads = "magpie_pipeline_loads_total"
            #expect(metrics.counterTotal(label: loads, dimensions: [("source", "remote")]) == 1)
            #expect(metrics.counterTotal(label: loads, dimensions: [("source", "memory")]) == 1)
            #expect(metrics.counterTotal(label: "magpie_pipeline_failures_total") == 1)
            #expect(metrics.counterTotal(label: "magpie_pipeline_cancellations_total") == 1)
            #expect(metrics.counterTotal(label: "magpie_pipeline_bytes_downloaded_total") >= Int64(bytes.count))
            #expect(try metrics.expectTimer("magpie_pipeline_decode_seconds").values.count == 1)
        }
    }

    @Test("The decode pixel limit holds: a larger image fails as undecodable and is never cached")
    func pixelLimit() async throws {
        try await withPipeline(configure: { $0.maxPixelCount = 100 }) { pipeline, origin, _ in
            origin.setFile("big", try TestImages.png(size: 16), etag: "big")
            let url = origin.url("/file/big")
            let error = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: url) }
            #expect(error?.kind == .decodingFailed)
            #expect(error?.detail.contains("limit") == true, "\(error?.detail ?? "")")
            #expect(pipeline.configuration.imageCache?.memoryImage(forKey: url.absoluteString) == nil)
        }
    }

    @Test("A timeout of 0 means the default, not an instant failure")
    func zeroTimeout() async throws {
        try await withPipeline(configure: { $0.timeout = .zero }) { pipeline, origin, _ in
            origin.setFile("z", try TestImages.png(size: 16), etag: "z")
            let response = try await pipeline.imageTask(with: ImageRequest(url: origin.url("/file/z?pace=20&chunk=64"))).response
            #expect(response.source == .remote)
            #expect(response.image?.width == 16)
        }
    }

    @Test("A maximum of 0 means no limit")
    func noLimit() async throws {
        try await withPipeline(configure: { $0.maxConcurrentDownloads = 0 }) { pipeline, origin, _ in
            let data = try TestImages.png(size: 32)
            for i in 0..<8 { origin.setFile("u\(i)", data, etag: "u\(i)") }
            let tasks = (0..<8).map { pipeline.imageTask(with: ImageRequest(url: origin.url("/file/u\($0)?pace=50&chunk=128"))) }
            #expect(await eventually { pipeline.currentDownloadCount == 8 })
            for task in tasks { _ = try await task.response }
            #expect(pipeline.currentDownloadCount == 0)
        }
    }
}

@Suite("Image pipeline: caches, revalidation, failures, filters")
struct PipelineCacheTests {
    @Test("A memory hit completes before loadImage returns (memoryFast)")
    func memoryFast() async throws {
        try await withPipeline { pipeline, origin, _ in
            origin.setFile("m", try TestImages.jpeg(), etag: "m")
            let url = origin.url("/file/m")
            _ = try await pipeline.image(for: url)
            let log = CallbackLog()
            let task = pipeline.loadImage(with: ImageRequest(url: url)) { log.record($0) }
            #expect(log.ends.count == 1)  // already called
            #expect(log.ends.first?.source == .memoryFast)
            #expect(task.state == .completed)
            let asynchronous = try await pipeline.imageTask(with: ImageRequest(url: url)).response
            #expect(asynchronous.source == .memory)
            #expect(origin.hits("/file/m") == 1)
        }
    }

    @Test("Disk hits make no request, for original and processed images")
    func diskHits() async throws {
        try await withPipeline { pipeline, origin, harness in
            origin.setFile("k", try TestImages.jpeg(), etag: "k")
            let url = origin.url("/file/k")
            let first = try await pipeline.imageTask(with: ImageRequest(url: url)).response
            #expect(first.source == .remote)
            #expect(first.status == 200)
            let thumb = try await pipeline.imageTask(with: ImageRequest(url: url, processors: [.resize(width: 50)])).response
            #expect(thumb.image?.width == 50)

            let fresh = try harness.sibling()
            let again = try await fresh.imageTask(with: ImageRequest(url: url)).response
            #expect(again.source == .disk)
            #expect(again.image?.size == first.image?.size)
            let processed = try await fresh.imageTask(with: ImageRequest(url: url, processors: [.resize(width: 50)])).response
            #expect(processed.source == .disk)
            #expect(processed.image?.width == 50)
            #expect(fresh.statistics.decodes == 1)  // the processed entry decoded directly, not the original
            #expect(origin.hits("/file/k") == 1)

            // ignoreDiskCache neither reads nor writes disk.
            let skipping = try harness.sibling()
            let remote = try await skipping.imageTask(with: ImageRequest(url: url, options: .ignoreDiskCache)).response
            #expect(remote.source == .remote)
            #expect(origin.hits("/file/k") == 2)
        }
    }

    @Test("Refresh sends the validators; a 304 keeps the cached bytes; a 304 without bytes is an error")
    func refreshRevalidates() async throws {
        try await withPipeline { pipeline, origin, _ in
            origin.setFile("r", try TestImages.jpeg(), etag: "r1")
            let url = origin.url("/file/r")
            _ = try await pipeline.image(for: url)
            let refreshed = try await pipeline.imageTask(with: ImageRequest(url: url, options: .refreshCache)).response
            #expect(origin.requests.last?.headers["if-none-match"] == "\"r1\"")
            #expect(refreshed.status == 304)
            #expect(refreshed.source == .remote)
            #expect(refreshed.image?.width == 240)

            // The file changed: the refresh gets the new one.
            origin.setFile("r", try TestImages.jpeg(width: 120, height: 80), etag: "r2")
            let changed = try await pipeline.imageTask(with: ImageRequest(url: url, options: .refreshCache)).response
            #expect(changed.status == 200)
            #expect(changed.image?.width == 120)

            // A 304 for bytes we do not have.
            origin.setFile("n", try TestImages.jpeg(), etag: "n1")
            let request = ImageRequest(url: origin.url("/file/n"), options: .refreshCache, headers: ["If-None-Match": "\"n1\""])
            let error = await #expect(throws: ImagePipelineError.self) { try await pipeline.imageTask(with: request).response }
            #expect(error?.kind == .notModifiedWithoutCache)
        }
    }

    @Test("useHTTPCache: fresh entries are served from disk, stale ones revalidated")
    func httpCache() async throws {
        try await withPipeline { pipeline, origin, harness in
            origin.setFile("h", try TestImages.jpeg(), etag: "h1")
            let fresh = origin.url("/file/h?maxAge=600")
            let stale = origin.url("/file/h?maxAge=0")
            _ = try await pipeline.image(for: ImageRequest(url: fresh, options: .useHTTPCache))
            _ = try await pipeline.image(for: ImageRequest(url: stale, options: .useHTTPCache))
            #expect(origin.hits("/file/h") == 2)

            let next = try harness.sibling()
            let served = try await next.imageTask(with: ImageRequest(url: fresh, options: .useHTTPCache)).response
            #expect(served.source == .disk)
            #expect(origin.hits("/file/h") == 2)
            let revalidated = try await next.imageTask(with: ImageRequest(url: stale, options: .useHTTPCache)).response
            #expect(revalidated.status == 304)
            #expect(origin.requests.last?.headers["if-none-match"] == "\"h1\"")
            #expect(origin.hits("/file/h") == 3)
        }
    }

    @Test("The failed-URL list remembers 404s, never transient errors, and can be cleared")
    func failedURLList() async throws {
        try await withPipeline { pipeline, origin, _ in
            let missing = origin.url("/file/none")
            let request = ImageRequest(url: missing, options: .ignoreFailedURL)
            let first = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: request) }
            #expect(first?.kind == .status)
            #expect(first?.status == 404)
            let second = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: request) }
            #expect(second?.kind == .failedURL)
            #expect(origin.hits("/file/none") == 1)

            let flaky = ImageRequest(url: origin.url("/flaky/x?failures=1"), options: .ignoreFailedURL)
            let transient = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: flaky) }
            #expect(transient?.status == 503)
            #expect(!pipeline.isFailedURL(origin.url("/flaky/x?failures=1")))

            // Undecodable data is not transient.
            origin.setFile("junk", Data("not an image".utf8), etag: "j")
            let junk = ImageRequest(url: origin.url("/file/junk"), options: .ignoreFailedURL)
            let decode = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: junk) }
            #expect(decode?.kind == .decodingFailed)
            #expect(pipeline.isFailedURL(origin.url("/file/junk")))

            pipeline.clearFailedURLs()
            let third = await #expect(throws: ImagePipelineError.self) { try await pipeline.image(for: request) }
            #expect(third?.kind == .status)
            #expect(origin.hits("/file/none") == 2)
        }
    }

    @Test("Headers and cache-key filters")
    func filters() async throws {
        try await withPipeline(configure: { configuration in
            configuration.headersFilter = { url, headers in
                var headers = headers
                headers["X-Signature"] = "sig:\(url.path)"
                return headers
            }
            configuration.cacheKeyFilter = { url in
                guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
                let kept = (components.queryItems ?? []).filter { $0.name != "token" }
                components.queryItems = kept.isEmpty ? nil : kept
                return components.string ?? url.absoluteString
            }
        }) { pipeline, origin, _ in
            origin.setFile("s", try TestImages.jpeg(), etag: "s")
            let first = origin.url("/file/s?token=abc")
            let second = origin.url("/file/s?token=xyz")
            #expect(pipeline.cacheKey(for: ImageRequest(url: first)) == origin.url("/file/s").absoluteString)
            #expect(pipeline.headers(for: ImageRequest(url: first))["Accept"] == "image/webp,image/*;q=0.8")
            _ = try await pipeline.image(for: first)
            let again = try await pipeline.imageTask(with: ImageRequest(url: second)).response
            #expect(again.source == .memory)
            #expect(origin.hits("/file/s") == 1)
            #expect(origin.requests.last?.headers["x-signature"] == "sig:/file/s")
        }
    }

    @Test("Progressive previews arrive before the image")
    func progressive() async throws {
        try await withPipeline(configure: { $0.previewInterval = .zero }) { pipeline, origin, _ in
            origin.setFile("p", try TestImages.jpeg(width: 800, height: 600, progressive: true), etag: "p")
            let task = pipeline.imageTask(with: ImageRequest(url: origin.url("/file/p?pace=15&chunk=4096"), options: .progressive))
            let previews = LockedValue(0)
            let done = LockedValue(false)
            let watcher = Task {
                for await preview in task.previews {
                    #expect(!done.value)
                    #expect(preview.width == 800)
                    previews.withLock { $0 += 1 }
                }
            }
            let image = try await task.image
            done.withLock { $0 = true }
            await watcher.value
            #expect(image.width == 800)
            #expect(previews.value >= 1)
            let progress = task.state
            #expect(progress == .completed)
        }
    }

    @Test("No preview callback comes after the final one, even when preview callbacks are slow")
    func previewsBeforeEnd() async throws {
        try await withPipeline(configure: { $0.previewInterval = .zero }) { pipeline, origin, _ in
            origin.setFile("q", try TestImages.jpeg(width: 800, height: 600, progressive: true), etag: "q")
            for round in 0..<4 {
                let log = CallbackLog()
                let request = ImageRequest(url: origin.url("/file/q?pace=5&chunk=8192&round=\(round)"),
                                           processors: [.resize(width: 80)],
                                           options: .progressive)
                pipeline.loadImage(with: request) { result in
                    if result.stage == .progress { usleep(30_000) }  // a slow consumer: the end arrives meanwhile
                    log.record(result)
                }
                #expect(await eventually(30) { log.ends.count == 1 })  // generous: Thread Sanitizer runs it beside the stress test
                try await Task.sleep(for: .milliseconds(100))  // previews still on their way would land now
                let stages = log.results.value.map(\.stage)
                #expect(stages.last == .finished)
                #expect(stages.filter { $0 != .progress }.count == 1)
                #expect(log.ends.first?.image?.width == 80)
            }
        }
    }

    @Test("Processed previews reach the caller in the order they were made, one processing at a time")
    func previewOrder() async throws {
        try await withPipeline(configure: { $0.previewInterval = .zero }) { pipeline, origin, _ in
            origin.setFile("o", try TestImages.jpeg(width: 800, height: 600, progressive: true), etag: "o")
            let stamp = StampProcessor()
            let request = ImageRequest(url: origin.url("/file/o?pace=3&chunk=4096"), processors: [stamp], options: .progressive)
            let task = pipeline.imageTask(with: request)
            let seen = LockedValue<[UInt8]>([])
            let watcher = Task { for await preview in task.previews { seen.withLock { $0.append(preview.bitmap.pixels[0]) } } }
            _ = try await task.response
            await watcher.value
            let stamps = seen.value
            #expect(!stamps.isEmpty)
            #expect(stamps == stamps.sorted())  // made in order, so delivered in order
            #expect(Set(stamps).count == stamps.count)
        }
    }

    @Test("A missing or invalid URL fails at once and starts nothing")
    func invalidURL() async throws {
        try await withPipeline { pipeline, origin, _ in
            for request in [ImageRequest(url: nil), ImageRequest(string: "ftp://example.com/a.png"), ImageRequest(string: "nota url")] {
                let log = CallbackLog()
                let task = pipeline.loadImage(with: request) { log.record($0) }
                #expect(log.ends.first?.error?.kind == .invalidURL)
                #expect(task.state == .completed)
            }
            #expect(origin.requestLog.isEmpty)
        }
    }

    @Test("Data-only loads, first-frame loads and scaled-down loads")
    func options() async throws {
        try await withPipeline(configure: { $0.scaleDownBudget = 100_000 }) { pipeline, origin, _ in
            let jpeg = try TestImages.jpeg(width: 800, height: 600)
            origin.setFile("o", jpeg, etag: "o")
            let dataOnly = try await pipeline.imageTask(with: ImageRequest(url: origin.url("/file/o"), options: .ignoreImageDecoding)).response
            #expect(dataOnly.image == nil)
            #expect(dataOnly.data == jpeg)
            let scaled = try await pipeline.image(for: ImageRequest(url: origin.url("/file/o"), options: .scaleDownLargeImages))
            #expect(scaled.width * scaled.height * 4 <= 100_000 * 2)
            #expect(scaled.width < 800)

            let gif = try SampleImages.spinner(size: 32, frames: 4).encoded(using: .gif())
            origin.setFile("g", gif, etag: "g")
            #expect(try await pipeline.image(for: origin.url("/file/g")).frames.count == 4)
            #expect(try await pipeline.image(for: ImageRequest(url: origin.url("/file/g"), options: .ignoreAnimatedImage)).frames.count == 1)
        }
    }

    @Test("A shared transform applies to requests without processors and is part of the key")
    func sharedTransform() async throws {
        try await withPipeline(configure: { $0.sharedTransform = SharedTransform(identifier: "grey") { image, _ in try image.processed(by: .grayscale) } }) { pipeline, origin, _ in
            origin.setFile("t", try TestImages.jpeg(), etag: "t")
            let url = origin.url("/file/t")
            let image = try await pipeline.image(for: url)
            #expect(image.bitmap.format == .gray8)
            #expect(pipeline.processedKey(for: ImageRequest(url: url)).hasSuffix("#grey"))
            let own = try await pipeline.image(for: ImageRequest(url: url, processors: [.resize(width: 10)]))
            #expect(own.bitmap.format != .gray8)
        }
    }

    @Test("Events and prefetching into the disk cache")
    func eventsAndPrefetch() async throws {
        try await withPipeline { pipeline, origin, harness in
            let data = try TestImages.png(size: 24)
            for i in 0..<5 { origin.setFile("f\(i)", data, etag: "f\(i)") }
            let events = LockedValue<[String]>([])
            let stream = pipeline.eventStream
            let listener = Task {
                for await event in stream {
                    switch event {
                    case .started: events.withLock { $0.append("started") }
                    case .responseReceived(_, let status): events.withLock { $0.append("response \(status)") }
                    case .cancelled: events.withLock { $0.append("cancelled") }
                    case .finished(_, let result): events.withLock { $0.append("finished \((try? result.get())?.rawValue ?? "error")") }
                    }
                }
            }
            let urls = (0..<5).map { origin.url("/file/f\($0)") }
            let prefetcher = ImagePrefetcher(pipeline: pipeline, destination: .diskCache)
            prefetcher.start(with: urls)
            await prefetcher.wait()
            #expect(prefetcher.completed.succeeded == 5)
            #expect(await eventually { events.value.filter { $0 == "finished remote" }.count == 5 })
            #expect(events.value.filter { $0 == "started" }.count == 5)
            #expect(events.value.filter { $0 == "response 200" }.count == 5)
            listener.cancel()

            let next = try harness.sibling()
            for url in urls {
                #expect(try await next.imageTask(with: ImageRequest(url: url)).response.source == .disk)
            }
            #expect(origin.requestLog.count == 5)
        }
    }
}

@Suite("ImageCache")
struct ImageCacheTests {
    @Test("Store, query, remove and clear each tier, and report where a hit came from")
    func tiers() async throws {
        let dir = try TemporaryDirectory("image-cache")
        defer { dir.remove() }
        let cache = try ImageCache(directory: dir.url)
        let image = try SampleImages.badge(size: 20)
        try await cache.store(image, forKey: "a", in: .all)
        #expect(await cache.location(ofKey: "a") == .memory)
        cache.clearMemory()
        #expect(await cache.location(ofKey: "a") == .disk)
        let (found, source) = try #require(try await cache.image(forKey: "a"))
        #expect(source == .disk)
        #expect(found.size == image.size)
        #expect(found.hasAlpha)  // kept losslessly (PNG) because it has alpha
        #expect(ImageDiff.maxDifference(ImageDiff.rgba(found), ImageDiff.rgba(image)) == 0)
        #expect(await cache.location(ofKey: "a") == .memory)
        try await cache.remove(forKey: "a", from: .memory)
        #expect(await cache.location(ofKey: "a") == .disk)
        try await cache.clearDisk()
        #expect(await cache.location(ofKey: "a") == nil)

        let opaque = try SampleImages.landscape(width: 40, height: 30)
        try await cache.store(opaque, forKey: "b", in: .disk)
        #expect(cache.memoryImage(forKey: "b") == nil)
        let bytes = try #require(try await cache.data(forKey: "b"))
        #expect(ImageFormat.sniff(bytes) == .jpeg)
    }

    @Test("The default cache key follows a request's URL when it is changed after init")
    func keyFollowsChangedURL() async throws {
        let memory = MemoryCache<String, Image>()
        var configuration = ImagePipeline.Configuration()
        configuration.imageCache = ImageCache(memory: memory, disk: nil)
        let pipeline = ImagePipeline(configuration: configuration)
        let image = Image(bitmap: try Bitmap(width: 1, height: 1, format: .rgb8, pixels: [1, 2, 3]))
        memory.setValue(image, forKey: "file:///nowhere/second.png", cost: image.cost)
        var request = ImageRequest(url: URL(string: "file:///nowhere/first.png"))
        request.url = URL(string: "file:///nowhere/second.png")
        #expect(pipeline.cacheKey(for: request) == "file:///nowhere/second.png")
        let hit = try await pipeline.image(for: request)
        #expect(hit.bitmap.pixels == [1, 2, 3])
    }

    @Test("File URLs: loaded, and a missing file, a directory or a file over the size limit fail with a reason")
    func fileURLs() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("magpie-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let small = directory.appendingPathComponent("small.jpg")
        try TestImages.jpeg(width: 40, height: 30).write(to: small)
        let large = directory.appendingPathComponent("large.jpg")
        try TestImages.jpeg(width: 800, height: 600).write(to: large)
        var configuration = ImagePipeline.Configuration()
        configuration.imageCache = nil
        configuration.maxResponseSize = 4096
        let pipeline = ImagePipeline(configuration: configuration)
        #expect(try await pipeline.image(for: small).width == 40)
        let cases: [(URL, String)] = [
            (directory.appendingPathComponent("missing.jpg"), "No such file"),
            (directory, "directory"),
            (large, "limit"),
        ]
        for (url, reason) in cases {
            do {
                _ = try await pipeline.image(for: url)
                Issue.record("\(url.path) loaded")
            } catch let error as ImagePipelineError {
                #expect(error.kind == .fileFailed)
                #expect(error.detail.contains(reason), "\(error.detail)")
            }
        }
    }
}

/// Replaces each image with a 1x1 gray one whose value counts the calls, taking a random
/// 0-20 ms (so that overlapping runs would finish out of order).
final class StampProcessor: ImageProcessing {
    let identifier = "stamp"
    let calls = LockedValue(0)

    func process(_ image: Image) throws -> Image {
        let number = calls.withLock { value -> Int in
            value += 1
            return value
        }
        usleep(UInt32.random(in: 0...20_000))
        return Image(bitmap: try Bitmap(width: 1, height: 1, format: .gray8, pixels: [UInt8(min(number, 255))]))
    }
}

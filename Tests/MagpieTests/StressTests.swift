import Foundation
@testable import Magpie
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

@Suite("Image pipeline under stress")
struct PipelineStressTests {
    @Test("10,000 loads over 100 URLs with random cancellation: every completion exactly once, nothing left behind")
    func tenThousandLoads() async throws {
        // A small memory tier (it keeps evicting) and no disk: loads keep meeting downloads,
        // decodes and processings in every state.
        try await withPipeline(disk: false, memory: true, configure: { configuration in
            configuration.imageCache = ImageCache(memory: MemoryCache(configuration: .init(costLimit: 32 * 32 * 4 * 8)), disk: nil)
            configuration.maxConcurrentDownloads = 8
        }) { pipeline, origin, _ in
            let png = try TestImages.png(size: 32)
            for i in 0..<100 { origin.setFile("s\(i)", png, etag: "s\(i)") }
            let total = 10_000
            let ends = LockedValue([Int](repeating: 0, count: total))
            let extra = LockedValue(0)
            var generator = SeededGenerator(seed: 42)
            var tasks: [ImageTask] = []
            tasks.reserveCapacity(total)
            for index in 0..<total {
                let url = origin.url("/file/s\(Int.random(in: 0..<100, using: &generator))")
                let processors: [any ImageProcessing] = Bool.random(using: &generator) ? [.resize(width: 16)] : []
                let priority = ImagePriority.allCases.randomElement(using: &generator) ?? .normal
                let task = pipeline.loadImage(with: ImageRequest(url: url, processors: processors, priority: priority)) { result in
                    guard result.stage != .progress else { return }
                    ends.withLock { $0[index] += 1 }
                    if result.stage == .finished, result.error == nil, result.image == nil { extra.withLock { $0 += 1 } }
                }
                tasks.append(task)
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<3: task.cancel()                                      // at once
                case 3: tasks[Int.random(in: 0...index, using: &generator)].cancel()  // an earlier one, in any state
                case 4: task.priority = .veryHigh
                default: break
                }
                if index % 500 == 0 { await Task.yield() }
            }
            #expect(await eventually(120) { pipeline.runningTaskCount == 0 })
            try await Task.sleep(for: .milliseconds(100))
            let counts = ends.value
            #expect(counts.allSatisfy { $0 == 1 }, "\(counts.filter { $0 != 1 }.count) loads ended a number of times other than once")
            #expect(extra.value == 0)
            #expect(tasks.allSatisfy { $0.state != .running })
            #expect(pipeline.processedJobs.count == 0)
            #expect(pipeline.imageJobs.count == 0)
            #expect(pipeline.dataJobs.count == 0)
            #expect(pipeline.currentDownloadCount == 0)
            #expect(pipeline.slots.waiting == 0)
            let cancelled = tasks.filter { $0.state == .cancelled }.count
            #expect(cancelled > 2_000)
            #expect(tasks.count - cancelled > 5_000)
            let statistics = pipeline.statistics
            #expect(origin.requestLog.count >= 100 && origin.requestLog.count <= statistics.downloads, "\(statistics)")
            #expect(statistics.decodes >= 100, "\(statistics)")
        }
    }
}

import Foundation
import Magpie
import MagpieBinding
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

/// A display target that records what it was asked to show.
@MainActor
final class RecordingTarget: ImageDisplaying {
    var shown: [(size: PixelSize?, transition: ImageTransition)] = []
    var current: Image?
    func display(_ image: Image?, transition: ImageTransition) {
        shown.append((image?.size, transition))
        current = image
    }
}

/// Tracks deallocation of targets.
@MainActor
final class DyingTarget: ImageDisplaying {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    isolated deinit { onDeinit() }
    func display(_ image: Image?, transition: ImageTransition) {}
}

@MainActor
func waitUntil(_ seconds: Double = 10, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

@MainActor
func withBinder(_ body: (ImageBinder, TestOrigin) async throws -> Void) async throws {
    let origin = try await TestOrigin.start()
    let transport = AsyncHTTPClientTransport()
    var configuration = ImagePipeline.Configuration()
    configuration.transport = transport
    configuration.imageCache = ImageCache(memory: MemoryCache(), disk: nil)
    let binder = ImageBinder(pipeline: ImagePipeline(configuration: configuration))
    do {
        try await body(binder, origin)
    } catch {
        try? await transport.shutdown()
        await origin.stop()
        throw error
    }
    try? await transport.shutdown()
    await origin.stop()
}

func jpeg(_ width: Int, _ height: Int) throws -> Data {
    try SampleImages.landscape(width: width, height: height).encoded(using: .jpeg(quality: 0.8))
}

@Suite("View binding")
@MainActor
struct BindingTests {
    @Test("Binding a new URL cancels the old load; the old image never replaces the new one")
    func rebindingCancels() async throws {
        try await withBinder { binder, origin in
            origin.setFile("old", try jpeg(40, 30), etag: "old")
            origin.setFile("new", try jpeg(50, 40), etag: "new")
            let target = RecordingTarget()
            let placeholder = try SampleImages.badge(size: 8)
            var ends: [ImageStage] = []
            let old = binder.setImage(with: origin.url("/file/old?pace=50&chunk=200"), on: target, placeholder: placeholder) { ends.append($0.stage) }
            binder.setImage(with: origin.url("/file/new"), on: target, placeholder: placeholder, transition: .fade(.milliseconds(200))) {
                ends.append($0.stage)
            }
            #expect(old?.state == .cancelled)
            #expect(await waitUntil { ends.count == 2 })
            try await Task.sleep(for: .milliseconds(400))  // the old transfer would have ended by now
            #expect(target.current?.size == PixelSize(width: 50, height: 40))
            #expect(target.shown.map(\.size) == [placeholder.size, placeholder.size, PixelSize(width: 50, height: 40)])
            #expect(target.shown.last?.transition == .fade(.milliseconds(200)))
            #expect(ends.sorted { $0.rawValue < $1.rawValue } == [.cancelled, .finished])
            #expect(binder.url(for: target) == origin.url("/file/new"))
        }
    }

    @Test("Binding the URL already loading keeps the running load")
    func sameURLKeepsLoad() async throws {
        try await withBinder { binder, origin in
            origin.setFile("same", try jpeg(30, 20), etag: "same")
            let target = RecordingTarget()
            let url = origin.url("/file/same?pace=30&chunk=300")
            let first = binder.setImage(with: url, on: target)
            let second = binder.setImage(with: url, on: target)
            #expect(first != nil && first === second)
            #expect(await waitUntil { target.current != nil })
            #expect(origin.requestLog.count == 1)
        }
    }

    @Test("States load separately; an unknown state is normal; a memory hit shows at once")
    func states() async throws {
        try await withBinder { binder, origin in
            origin.setFile("n", try jpeg(20, 10), etag: "n")
            origin.setFile("h", try jpeg(22, 11), etag: "h")
            let button = RecordingTarget()
            binder.setImage(with: origin.url("/file/n"), on: button, for: .normal)
            binder.setImage(with: origin.url("/file/h"), on: button, for: .highlighted)
            #expect(await waitUntil { button.shown.compactMap(\.size).count == 2 })
            #expect(Set(button.shown.compactMap(\.size)) == [PixelSize(width: 20, height: 10), PixelSize(width: 22, height: 11)])
            #expect(ControlState(named: "focused") == .normal)
            #expect(binder.url(for: button, state: .highlighted) == origin.url("/file/h"))

            let other = RecordingTarget()
            binder.setImage(with: origin.url("/file/n"), on: other)
            #expect(other.shown.map(\.size) == [PixelSize(width: 20, height: 10)])  // no placeholder flash, before returning
        }
    }

    @Test("A nil URL cancels and shows the placeholder; ignorePlaceholder keeps the old image; avoidSetImage only completes")
    func options() async throws {
        try await withBinder { binder, origin in
            origin.setFile("x", try jpeg(24, 16), etag: "x")
            let target = RecordingTarget()
            let placeholder = try SampleImages.badge(size: 6)
            let running = binder.setImage(with: origin.url("/file/x?pace=50&chunk=100"), on: target)
            binder.setImage(with: nil, on: target, placeholder: placeholder)
            #expect(running?.state == .cancelled)
            #expect(target.current?.size == placeholder.size)

            binder.setImage(with: origin.url("/file/x"), on: target, binding: .ignorePlaceholder)
            #expect(target.shown.count == 2)  // the first bind cleared (no placeholder), the nil URL showed the placeholder; ignorePlaceholder adds nothing
            #expect(await waitUntil { target.current?.size == PixelSize(width: 24, height: 16) })

            let quiet = RecordingTarget()
            var seen: Image?
            binder.setImage(with: origin.url("/file/x?v=2"), on: quiet, binding: [.avoidSetImage, .ignorePlaceholder]) { seen = $0.image }
            #expect(await waitUntil { seen != nil })
            #expect(quiet.shown.isEmpty)
        }
    }

    @Test("Deallocated targets leak nothing: their bindings go and their loads are cancelled")
    func deallocatedTargets() async throws {
        try await withBinder { binder, origin in
            origin.setFile("d", try jpeg(20, 20), etag: "d")
            let freed = LockedValue(0)
            var tasks: [ImageTask] = []
            do {
                var targets: [DyingTarget] = []
                for i in 0..<50 {
                    let target = DyingTarget { freed.withLock { $0 += 1 } }
                    if let task = binder.setImage(with: origin.url("/file/d?pace=100&chunk=100&i=\(i)"), on: target) { tasks.append(task) }
                    targets.append(target)
                }
                #expect(binder.bindingCount == 50)
                targets.removeAll()
            }
            #expect(await waitUntil { freed.value == 50 })
            #expect(binder.bindingCount == 0)
            #expect(tasks.allSatisfy { $0.state == .cancelled })
            #expect(await waitUntil { binder.pipeline.runningTaskCount == 0 })
        }
    }
}

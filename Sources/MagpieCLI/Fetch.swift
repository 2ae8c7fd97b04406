import ArgumentParser
import Foundation
import Magpie
import MagpieCache
import MagpieImage
import MagpieNetworking
import MagpieSupport

/// `magpie fetch URL...`: loads URLs through one image pipeline.
struct Fetch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load images through the pipeline (memory, disk, network) and save them.",
        discussion: """
            Every URL goes through one pipeline, duplicates included (they share one download). Prints per \
            URL where the image came from (memoryFast, memory, disk, remote), its size, the bytes written and \
            the time. The disk cache lives in $XDG_CACHE_HOME/magpie/images (~/.cache/magpie/images) unless \
            --cache-dir or --no-disk-cache says otherwise. Exits 1 if any URL failed.
            """)

    @Argument(help: "http(s) or file URLs.")
    var urls: [String]

    @Option(help: "Write each image here (named after the URL's last path component).")
    var out: String?

    @Option(name: .customLong("cache-dir"), help: "The disk cache directory.")
    var cacheDir: String?

    @Flag(name: .customLong("no-disk-cache"), help: "Memory cache only.")
    var noDiskCache = false

    @Option(help: "Make thumbnails of this size: WxH, or W for a square.")
    var size: String?

    @Option(help: "How a thumbnail fits its size: fit (default) or fill.")
    var fit: String = "fit"

    @Option(help: "Output format: jpeg, png, webp or gif (default: the source's, PNG for images with alpha otherwise JPEG).")
    var format: String?

    @Flag(help: "Ask the server again (with the cached validators), ignoring cached results.")
    var refresh = false

    @Option(help: "Downloads at once (default 6).")
    var concurrency = 6

    @Flag(help: "Print a JSON array: url, source, width, height, bytes, path, milliseconds, error.")
    var json = false

    func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("give at least one URL") }
        guard concurrency >= 0 else { throw ValidationError("--concurrency must be 0 (no limit) or more") }
        guard fit == "fit" || fit == "fill" else { throw ValidationError("--fit must be fit or fill") }
        if let size { _ = try Self.parseSize(size) }
        if let format, Self.encoder(named: format) == nil { throw ValidationError("unknown --format '\(format)'; use jpeg, png, webp or gif") }
    }

    static func parseSize(_ text: String) throws -> PixelSize {
        let parts = text.lowercased().split(separator: "x").map { Int($0) }
        if parts.count == 1, let side = parts[0], side > 0 { return PixelSize(width: side, height: side) }
        guard parts.count == 2, let width = parts[0], let height = parts[1], width >= 0, height >= 0, width + height > 0 else {
            throw ValidationError("--size must look like 256x256 or 256, not '\(text)'")
        }
        return PixelSize(width: width, height: height)
    }

    static func encoder(named name: String) -> (any ImageEncoding)? {
        switch name.lowercased() {
        case "jpeg", "jpg": ImageEncoders.JPEG(quality: 0.85)
        case "png": ImageEncoders.PNG()
        case "webp": ImageEncoders.WebP(quality: 0.8)
        case "gif": ImageEncoders.GIF()
        default: nil
        }
    }

    /// One line of the report.
    struct Outcome: Sendable {
        var url: String
        var source: ImageSource?
        var size: PixelSize?
        var bytes: Int?
        var path: String?
        var milliseconds: Double
        var error: String?
    }

    func run() async throws {
        let disk: DiskCache?
        if noDiskCache {
            disk = nil
        } else {
            let directory = cacheDir.map { URL(fileURLWithPath: $0) } ?? ImageCache.defaultDirectory
            do {
                disk = try DiskCache(directory: directory)
            } catch {
                Terminal.error("magpie: error: cannot open the disk cache at \(directory.path): \(error)")
                throw ExitCode(1)
            }
        }
        if let out { try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true) }
        let outcomes = try await withTransport { transport in
            var configuration = ImagePipeline.Configuration()
            configuration.transport = transport
            configuration.imageCache = ImageCache(disk: disk)
            configuration.maxConcurrentDownloads = concurrency
            configuration.activity = nil
            return await load(ImagePipeline(configuration: configuration))
        }
        if json {
            let objects: [[String: Any]] = outcomes.map { outcome in
                [
                    "url": outcome.url, "source": outcome.source?.rawValue as Any? ?? NSNull(),
                    "width": outcome.size?.width as Any? ?? NSNull(), "height": outcome.size?.height as Any? ?? NSNull(),
                    "bytes": outcome.bytes as Any? ?? NSNull(), "path": outcome.path as Any? ?? NSNull(),
                    "milliseconds": (outcome.milliseconds * 10).rounded() / 10, "error": outcome.error as Any? ?? NSNull(),
                ]
            }
            let data = try JSONSerialization.data(withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            print(String(decoding: data, as: UTF8.self))
        } else {
            for outcome in outcomes {
                if let error = outcome.error {
                    Terminal.error("\(outcome.url): error: \(error)")
                } else {
                    let size = outcome.size.map { "\($0.width)x\($0.height)" } ?? "-"
                    let bytes = outcome.bytes.map { "\($0) bytes" } ?? ""
                    let path = outcome.path.map { " -> \($0)" } ?? ""
                    print(String(format: "%@: %@ %@ %@ %.1f ms%@", outcome.url, outcome.source?.rawValue ?? "-", size, bytes, outcome.milliseconds, path))
                }
            }
        }
        if outcomes.contains(where: { $0.error != nil }) { throw ExitCode(1) }
    }

    private func load(_ pipeline: ImagePipeline) async -> [Outcome] {
        let thumbnail = size.flatMap { try? Self.parseSize($0) }.map {
            ThumbnailOptions(size: $0, contentMode: fit == "fill" ? .fill : .fit)
        }
        let options: ImageOptions = refresh ? [.refreshCache] : []
        let meter = ProgressMeter(enabled: !json, interactive: isatty(STDERR_FILENO) != 0)
        let finished = LockedValue(0)
        let total = Int64(urls.count)
        let names = Self.outputNames(for: urls)
        let outputFormat = format
        let directory = out
        return await withTaskGroup(of: (Int, Outcome).self) { group in
            for (index, text) in urls.enumerated() {
                group.addTask {
                    let started = ContinuousClock.now
                    func elapsed() -> Double {
                        let duration = ContinuousClock.now - started
                        return Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
                    }
                    let url = URL(string: text).map { $0.scheme == nil ? URL(fileURLWithPath: text) : $0 }
                    let request = ImageRequest(url: url, thumbnail: thumbnail, options: options)
                    var outcome = Outcome(url: text, milliseconds: 0)
                    do {
                        let response = try await pipeline.imageTask(with: request).response
                        outcome.source = response.source
                        outcome.size = response.image?.size
                        if let image = response.image, let directory {
                            let encoder = outputFormat.flatMap(Self.encoder(named:))
                                ?? image.format.flatMap { ImageEncoders.encoder(for: $0, quality: 0.85) }
                                ?? (image.hasAlpha ? ImageEncoders.PNG() : ImageEncoders.JPEG(quality: 0.85))
                            let bytes = try image.encoded(using: encoder)
                            let path = (directory as NSString).appendingPathComponent(names[index] + "." + encoder.format.fileExtension)
                            try FileOutput.write(bytes, to: path)
                            outcome.bytes = bytes.count
                            outcome.path = path
                        } else {
                            outcome.bytes = response.data?.count
                        }
                    } catch {
                        outcome.error = "\(error)"
                    }
                    outcome.milliseconds = elapsed()
                    let done = finished.withLock { value -> Int64 in
                        value += 1
                        return Int64(value)
                    }
                    meter.update(TransferProgress(completed: done, expected: total), unit: "images")
                    return (index, outcome)
                }
            }
            var outcomes = [Outcome?](repeating: nil, count: urls.count)
            for await (index, outcome) in group { outcomes[index] = outcome }
            meter.finish()
            return outcomes.compactMap { $0 }
        }
    }

    /// File names from the URLs' last path components (without extension), made unique;
    /// the same URL twice gets the same name.
    static func outputNames(for urls: [String]) -> [String] {
        var byURL: [String: String] = [:]
        var used: Set<String> = []
        return urls.map { text in
            if let name = byURL[text] { return name }
            let last = URL(string: text)?.deletingPathExtension().lastPathComponent ?? "image"
            let base = last.isEmpty || last == "/" ? "image" : last
            var name = base
            var counter = 2
            while used.contains(name) {
                name = "\(base)-\(counter)"
                counter += 1
            }
            used.insert(name)
            byURL[text] = name
            return name
        }
    }
}

import ArgumentParser
import Crypto
import Dispatch
import Foundation
import MagpieImage
import MagpieNetworking
import MagpieSupport

/// Options shared by the network commands.
struct HeaderOptions: ParsableArguments {
    @Option(name: .customLong("header"), help: ArgumentHelp("A header to send, as 'Name: value' (repeatable).", valueName: "K: V"))
    var headers: [String] = []

    func parsed() throws -> HeaderFields {
        var fields = HeaderFields()
        for header in headers {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw ValidationError("--header must look like 'Name: value', not '\(header)'")
            }
            fields.add(String(header[..<colon]).trimmingCharacters(in: .whitespaces),
                       String(header[header.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        return fields
    }
}

/// Runs `body` with a transport of its own, shut down afterwards whatever happens.
func withTransport<T>(_ body: (AsyncHTTPClientTransport) async throws -> T) async throws -> T {
    let transport = AsyncHTTPClientTransport()
    do {
        let result = try await body(transport)
        try? await transport.shutdown()
        return result
    } catch {
        try? await transport.shutdown()
        throw error
    }
}

/// `magpie download URL --to FILE`: a resumable download with a progress bar.
struct Download: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Download a URL to a file, resuming from what an interrupted run left.",
        discussion: """
            Partial data is kept next to the file (FILE.magpie-partial) as it arrives, so running the same \
            command again after an interruption (Ctrl-C, a killed process, a dropped connection) continues \
            where it stopped. Prints the final size and SHA-256.
            """)

    @Argument(help: "The http(s) URL.")
    var url: String

    @Option(help: "Where to save the file.")
    var to: String

    @Flag(name: .customLong("no-resume"), help: "Start from zero and delete partial data on failure.")
    var noResume = false

    @Option(help: "Automatic retries after a dropped connection (default 3).")
    var retries = 3

    @OptionGroup var header: HeaderOptions

    @Flag(help: "No progress output.")
    var quiet = false

    func run() async throws {
        let destination = URL(fileURLWithPath: to)
        var options = DownloadOptions()
        options.resumable = !noResume
        options.ignoresBaseURL = true
        options.headers = try header.parsed()
        options.maxRetries = max(0, retries)
        let meter = ProgressMeter(enabled: !quiet, interactive: isatty(STDERR_FILENO) != 0)
        options.onProgress = { meter.update($0) }

        try await withTransport { transport in
            var configuration = NetworkClient.Configuration()
            configuration.transport = transport
            configuration.activity = nil
            let client = NetworkClient(configuration: configuration)
            let task: DownloadTask
            do {
                task = try client.download(url, to: destination, options: options)
            } catch {
                Terminal.error("magpie: error: \(error)")
                throw ExitCode(1)
            }
            let resumable = options.resumable
            let interrupt = InterruptHandler {
                meter.finish()
                let kept = task.resumeData
                let stored = (try? FileManager.default.attributesOfItem(atPath: kept.path)[.size] as? NSNumber)?.int64Value ?? 0
                if resumable && stored > 0 {
                    Terminal.error("magpie: interrupted; \(Self.bytes(stored)) kept in \(kept.path); run the same command to resume")
                } else {
                    Terminal.error("magpie: interrupted")
                }
            }
            defer { interrupt.cancel() }
            do {
                let result = try await task.result()
                meter.finish()
                let digest = try Self.sha256(of: result.file)
                let resumed = result.resumedFrom > 0 ? " (resumed from \(Self.bytes(result.resumedFrom)))" : ""
                print("saved \(result.file.path): \(result.bytes) bytes\(resumed)")
                print("sha256 \(digest)")
            } catch let error as NetworkError {
                meter.finish()
                Terminal.error("magpie: error: \(error)")
                throw ExitCode(1)
            }
        }
    }

    static func sha256(of file: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
    }
}

/// Calls `handler` and exits with status 130 on SIGINT or SIGTERM.
final class InterruptHandler {
    private let sources: [any DispatchSourceSignal]

    init(_ handler: @escaping @Sendable () -> Void) {
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                handler()
                exit(130)
            }
            source.resume()
            return source
        }
    }

    func cancel() {
        for source in sources { source.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
}

/// A progress bar on a terminal (bytes, rate, ETA), a line per 10% (or per 10 MB when the
/// length is unknown) otherwise.
final class ProgressMeter: Sendable {
    private struct State {
        var started = ContinuousClock.now
        var lastDraw = ContinuousClock.now - .seconds(1)
        var lastStep: Int64 = -1
        var drawn = false
        var firstCompleted: Int64?
    }

    private let enabled: Bool
    private let interactive: Bool
    private let state = LockedValue(State())

    init(enabled: Bool, interactive: Bool) {
        self.enabled = enabled
        self.interactive = interactive
    }

    /// Shows `progress`: bytes by default, or a count of `unit` ("3/10 images").
    func update(_ progress: TransferProgress, unit: String? = nil) {
        guard enabled else { return }
        let now = ContinuousClock.now
        let line = state.withLock { state -> String? in
            if state.firstCompleted == nil { state.firstCompleted = progress.completed }
            let done = progress.expected >= 0 && progress.completed >= progress.expected
            if let unit {
                if interactive {
                    guard done || now - state.lastDraw >= .milliseconds(100) else { return nil }
                    state.lastDraw = now
                    state.drawn = true
                    let width = 30, filled = Int(progress.fraction * Double(width))
                    return "\r[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
                        + "] \(progress.completed)/\(progress.expected) \(unit)\u{1B}[K"
                }
                return nil  // counts are not worth a line each when not on a terminal
            }
            if interactive {
                guard done || now - state.lastDraw >= .milliseconds(100) else { return nil }
                state.lastDraw = now
                state.drawn = true
                return "\r" + Self.bar(progress, since: state.started, base: state.firstCompleted ?? 0, now: now) + "\u{1B}[K"
            }
            let step = progress.expected > 0 ? Int64(progress.fraction * 10) : progress.completed / (10 << 20)
            guard step != state.lastStep else { return nil }
            state.lastStep = step
            let total = progress.expected >= 0 ? " of \(Download.bytes(progress.expected)) (\(Int(progress.fraction * 100))%)" : ""
            return "downloaded \(Download.bytes(progress.completed))\(total)\n"
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    func finish() {
        let drawn = state.withLock { state -> Bool in
            defer { state.drawn = false }
            return state.drawn
        }
        if drawn && interactive { FileHandle.standardError.write(Data("\n".utf8)) }
    }

    static func bar(_ progress: TransferProgress, since started: ContinuousClock.Instant, base: Int64, now: ContinuousClock.Instant) -> String {
        let elapsed = max(0.001, Double((now - started).components.seconds) + Double((now - started).components.attoseconds) / 1e18)
        let rate = Double(progress.completed - base) / elapsed
        let rateText = Download.bytes(Int64(rate)) + "/s"
        guard progress.expected > 0 else {
            return "\(Download.bytes(progress.completed))  \(rateText)"
        }
        let width = 30
        let filled = Int(progress.fraction * Double(width))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let remaining = rate > 0 ? Double(progress.expected - progress.completed) / rate : 0
        let eta = remaining > 0 ? String(format: "ETA %d:%02d", Int(remaining) / 60, Int(remaining) % 60) : "ETA --:--"
        return String(format: "[%@] %3d%%  %@ / %@  %@  %@", bar, Int(progress.fraction * 100),
                      Download.bytes(progress.completed), Download.bytes(progress.expected), rateText, eta)
    }
}

/// `magpie request METHOD URL`: a small httpie over NetworkClient.
struct Request: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send an HTTP request and print the status, headers and body.",
        discussion: """
            -d name=value adds a parameter (a string); -d name:=JSON adds a raw JSON value (number, true, \
            array...). Parameters go in the query for GET and DELETE and in a form body otherwise, or in a \
            JSON body with --json. Exits 1 when the status is 400 or above.
            """)

    @Argument(help: "GET, POST, PUT, DELETE, PATCH or HEAD.")
    var method: String

    @Argument(help: "The http(s) URL.")
    var url: String

    @Option(name: .customShort("d"), help: ArgumentHelp("A parameter, name=value or name:=JSON (repeatable).", valueName: "name=value"))
    var data: [String] = []

    @Flag(help: "Send the parameters as a JSON body (and ask for JSON back).")
    var json = false

    @OptionGroup var header: HeaderOptions

    @Option(help: "Timeout in seconds (default 20).")
    var timeout: Double = 20

    @Flag(help: "Accept any TLS certificate for this request.")
    var insecure = false

    @Flag(name: .customLong("body-only"), help: "Print only the body.")
    var bodyOnly = false

    func validate() throws {
        guard ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"].contains(method.uppercased()) else {
            throw ValidationError("unknown method '\(method)'; use GET, POST, PUT, DELETE, PATCH or HEAD")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    static func parameter(_ text: String) throws -> (String, ParameterValue) {
        if let range = text.range(of: ":="), !text[..<range.lowerBound].isEmpty {
            let raw = String(text[range.upperBound...])
            guard let object = try? JSONSerialization.jsonObject(with: Data(raw.utf8), options: [.fragmentsAllowed]) else {
                throw ValidationError("-d \(text): '\(raw)' is not JSON")
            }
            return (String(text[..<range.lowerBound]), value(object))
        }
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else {
            throw ValidationError("-d must look like name=value or name:=JSON, not '\(text)'")
        }
        return (String(text[..<equals]), .string(String(text[text.index(after: equals)...])))
    }

    static func value(_ object: Any) -> ParameterValue {
        switch object {
        case let number as NSNumber:
            // JSONSerialization gives booleans as NSNumber too; their type code is "c".
            if String(cString: number.objCType) == "c" { return .bool(number.boolValue) }
            let double = number.doubleValue
            return double == double.rounded() && abs(double) < 1e15 ? .int(number.intValue) : .double(double)
        case let string as String: return .string(string)
        case let array as [Any]: return .array(array.map(value))
        case let dictionary as [String: Any]: return .object(dictionary.mapValues(value))
        default: return .null
        }
    }

    func run() async throws {
        var parameters = Parameters()
        for item in data {
            let (name, value) = try Self.parameter(item)
            parameters[name] = value
        }
        var request = NetworkRequest(HTTPMethod(rawValue: method), url, parameters: parameters, encoding: json ? .json : nil,
                                     headers: try header.parsed())
        if json && !request.headers.contains("Accept") { request.headers["Accept"] = "application/json" }
        request.ignoresBaseURL = true
        request.acceptableStatusCodes = Set(100..<600)
        request.allowsInvalidCertificates = insecure
        request.timeout = .milliseconds(Int(timeout * 1000))

        let response: NetworkResponse
        do {
            response = try await withTransport { transport in
                var configuration = NetworkClient.Configuration()
                configuration.transport = transport
                configuration.activity = nil
                return try await NetworkClient(configuration: configuration).send(request)
            }
        } catch let error as NetworkError {
            Terminal.error("magpie: error: \(error)")
            throw ExitCode(1)
        }
        if !bodyOnly {
            print("HTTP \(response.status) \(Self.reason(response.status))")
            for field in response.headers { print("\(field.name): \(field.value)") }
            print("")
        }
        print(Self.printable(response))
        if response.status >= 400 { throw ExitCode(1) }
    }

    /// JSON pretty-printed, text as it is, binary summarised.
    static func printable(_ response: NetworkResponse) -> String {
        let type = response.headers["Content-Type"]?.lowercased() ?? ""
        if type.contains("json"), let object = try? JSONSerialization.jsonObject(with: response.body, options: [.fragmentsAllowed]),
           let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]) {
            return String(decoding: pretty, as: UTF8.self)
        }
        if let text = String(data: response.body, encoding: .utf8), !text.contains("\0") { return text }
        return "<\(response.body.count) bytes of binary data (\(type.isEmpty ? "no Content-Type" : type)); use magpie download to save it>"
    }

    static func reason(_ status: Int) -> String {
        HTTPStatus.reason(status)
    }
}

/// `magpie upload URL IMAGE...`: a multipart image upload, re-encoding JPEGs below quality 1.
struct Upload: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Upload images as multipart form data, optionally re-compressed as JPEG.")

    @Argument(help: "The http(s) URL to POST to.")
    var url: String

    @Argument(help: "Image files.")
    var images: [String]

    @Option(help: "The form field name of each image (default file).")
    var name = "file"

    @Option(help: "MIME type: jpg, jpeg, png (any case) or a full type (default jpg).")
    var type = "jpg"

    @Option(help: "JPEG quality 0...1; below 1 each image is re-encoded first (default 1).")
    var quality: Double = 1

    @Flag(help: "One request per image.")
    var separately = false

    @Option(name: .customShort("d"), help: ArgumentHelp("A text field, name=value (repeatable).", valueName: "name=value"))
    var data: [String] = []

    @OptionGroup var header: HeaderOptions

    func validate() throws {
        guard (0...1).contains(quality) else { throw ValidationError("--quality must be within 0...1") }
        guard MIMEType.normalize(type) != nil else { throw ValidationError("unknown --type '\(type)'") }
    }

    func run() async throws {
        var uploads: [UploadImage] = []
        for path in images {
            do {
                uploads.append(UploadImage(data: try FileInput.read(path), fileName: URL(fileURLWithPath: path).lastPathComponent))
            } catch {
                Terminal.error("magpie: error: \(error)")
                throw ExitCode(1)
            }
        }
        var options = UploadOptions()
        options.ignoresBaseURL = true
        options.headers = try header.parsed()
        for item in data {
            let (key, value) = try Request.parameter(item)
            options.parameters[key] = value
        }
        let reencode: JPEGReencoder = { data, quality in
            try Image(data: data).encoded(using: ImageEncoders.JPEG(quality: quality))
        }
        let report = try await withTransport { transport in
            var configuration = NetworkClient.Configuration()
            configuration.transport = transport
            configuration.activity = nil
            return try await NetworkClient(configuration: configuration).uploadImages(
                url, images: uploads, name: name, mimeType: type, compressionQuality: quality, reencode: reencode,
                separately: separately, options: options)
        }
        for response in report.responses {
            print("HTTP \(response.status) \(Request.reason(response.status))")
            print(Request.printable(response))
        }
        for failure in report.failures { Terminal.error("magpie: \(failure.fileName): \(failure.error)") }
        if !report.succeeded { throw ExitCode(1) }
    }
}

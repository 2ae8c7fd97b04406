public import Foundation
import MagpieSupport

/// A `multipart/form-data` body (RFC 7578), built part by part. File parts are streamed from
/// disk when the body is sent, so a large upload never sits in memory whole.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("Ada", name: "author")
/// try form.append(fileAt: photo, name: "photo", mimeType: "image/jpeg")
/// let response = try await client.upload("albums/7/photos", form: form)
/// ```
public struct MultipartFormData: Sendable {
    enum Content: Sendable {
        case data(Data)
        case file(URL, size: Int64)

        var length: Int64 {
            switch self {
            case .data(let data): Int64(data.count)
            case .file(_, let size): size
            }
        }
    }

    struct Part: Sendable {
        var name: String
        var fileName: String?
        var mimeType: String?
        var content: Content
    }

    /// The boundary between parts.
    public let boundary: String
    var parts: [Part] = []

    /// An empty form with a random boundary.
    public init() {
        var generator = SystemRandomNumberGenerator()
        boundary = "magpie-" + (0..<24).map { _ in String(UInt8.random(in: 0..<36, using: &generator), radix: 36) }.joined()
    }

    /// An empty form with this boundary (for reproducible bodies in tests).
    public init(boundary: String) {
        self.boundary = boundary
    }

    /// The number of parts.
    public var count: Int { parts.count }

    /// The `Content-Type` header value.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func append(_ value: String, name: String) {
        parts.append(Part(name: name, fileName: nil, mimeType: nil, content: .data(Data(value.utf8))))
    }

    /// Adds bytes, as a file when `fileName` is given.
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil) {
        parts.append(Part(name: name, fileName: fileName, mimeType: mimeType, content: .data(data)))
    }

    /// Adds a file, read from disk only while the body is sent. The file name defaults to the
    /// file's own and the MIME type to one guessed from its extension.
    public mutating func append(fileAt url: URL, name: String, fileName: String? = nil, mimeType: String? = nil) throws {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value,
              FileManager.default.isReadableFile(atPath: url.path) else {
            throw NetworkError(.fileFailed, url: url, "cannot read \(url.path) for upload")
        }
        parts.append(Part(
            name: name, fileName: fileName ?? url.lastPathComponent,
            mimeType: mimeType ?? MIMEType.guess(pathExtension: url.pathExtension), content: .file(url, size: size)))
    }

    /// The head of one part: boundary line and headers.
    private func head(of part: Part, first: Bool) -> Data {
        var text = (first ? "" : "\r\n") + "--\(boundary)\r\n"
        text += "Content-Disposition: form-data; name=\"\(Self.quoted(part.name))\""
        if let fileName = part.fileName { text += "; filename=\"\(Self.quoted(fileName))\"" }
        text += "\r\n"
        if let mimeType = part.mimeType { text += "Content-Type: \(mimeType)\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    private var tail: Data { Data(((parts.isEmpty ? "" : "\r\n") + "--\(boundary)--\r\n").utf8) }

    /// Quotes and line breaks cannot appear inside a quoted parameter; they are percent-encoded
    /// as browsers do.
    static func quoted(_ text: String) -> String {
        text.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A")
    }

    /// The exact length of the encoded body.
    public var contentLength: Int64 {
        var total = Int64(tail.count)
        for (index, part) in parts.enumerated() {
            total += Int64(head(of: part, first: index == 0).count) + part.content.length
        }
        return total
    }

    /// The encoded body as a stream: in-memory parts as they are, files in 256 KB reads, one
    /// read each time the sender asks for more (nothing is read ahead).
    public var body: RequestBody {
        let parts = self.parts
        let heads = parts.enumerated().map { head(of: $0.element, first: $0.offset == 0) }
        let tail = self.tail
        return .stream(length: contentLength) {
            let reader = MultipartReader(parts: parts, heads: heads, tail: tail)
            return AsyncThrowingStream { try reader.next() }
        }
    }

    /// The whole body in memory (for small forms and tests).
    public func encoded() async throws -> Data {
        guard case .stream(_, let make) = body else { return Data() }
        var data = Data()
        for try await chunk in make() { data.append(chunk) }
        return data
    }
}

/// Pulls the encoded body one chunk at a time.
private final class MultipartReader: @unchecked Sendable {  // pulled by one stream consumer at a time
    private let parts: [MultipartFormData.Part]
    private let heads: [Data]
    private let tail: Data
    private var index = 0
    private var file: FileReader?
    private var fileSent: Int64 = 0
    private var finished = false

    init(parts: [MultipartFormData.Part], heads: [Data], tail: Data) {
        self.parts = parts
        self.heads = heads
        self.tail = tail
    }

    func next() throws -> Data? {
        if let file {
            if let chunk = try file.next() {
                fileSent += Int64(chunk.count)
                return chunk
            }
            self.file = nil
            if case .file(let url, let size) = parts[index - 1].content, fileSent != size {
                throw NetworkError(.fileFailed, url: url, "\(url.path) changed size while it was uploaded")
            }
        }
        guard index < parts.count else {
            guard !finished else { return nil }
            finished = true
            return tail
        }
        let part = parts[index]
        var chunk = heads[index]
        index += 1
        switch part.content {
        case .data(let data):
            chunk.append(data)
        case .file(let url, _):
            file = FileReader(url: url, chunkSize: 256 * 1024)
            fileSent = 0
        }
        return chunk
    }
}

/// MIME types, including SJNetwork's short forms.
public enum MIMEType {
    /// The full type for a short form (`jpg`, `JPEG`, `png`, `gif`, `webp`, without case) or a
    /// full type (returned lowercased); nil for anything else.
    public static func normalize(_ text: String) -> String? {
        let lower = text.trimmingCharacters(in: .whitespaces).lowercased()
        switch lower {
        case "jpg", "jpeg", "image/jpg", "image/jpeg": return "image/jpeg"
        case "png", "image/png": return "image/png"
        case "gif", "image/gif": return "image/gif"
        case "webp", "image/webp": return "image/webp"
        default:
            let halves = lower.split(separator: "/")
            guard halves.count == 2, !halves[0].isEmpty, !halves[1].isEmpty,
                  lower.allSatisfy({ $0.isLetter || $0.isNumber || "/+-.".contains($0) }) else { return nil }
            return lower
        }
    }

    /// A type for a file extension; `application/octet-stream` when unknown.
    public static func guess(pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "jpg", "jpeg": "image/jpeg"
        case "png": "image/png"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "bmp": "image/bmp"
        case "ico": "image/x-icon"
        case "avif": "image/avif"
        case "heic": "image/heic"
        case "json": "application/json"
        case "txt": "text/plain"
        case "html", "htm": "text/html"
        case "pdf": "application/pdf"
        case "zip": "application/zip"
        default: "application/octet-stream"
        }
    }
}

public import Foundation

/// An encoded image to upload (SJNetwork's image upload). MagpieNetworking does not decode or
/// encode images; the caller gives bytes and, for re-compression, a hook.
public struct UploadImage: Sendable {
    /// The encoded bytes.
    public var data: Data
    /// The file name sent for it.
    public var fileName: String

    public init(data: Data, fileName: String) {
        self.data = data
        self.fileName = fileName
    }
}

/// Re-encodes a JPEG at a quality between 0 and 1 (the CLI and the pipeline wire this to the
/// JPEG encoder).
public typealias JPEGReencoder = @Sendable (_ data: Data, _ quality: Double) throws -> Data

/// What an image upload did, image by image.
public struct ImageUploadReport: Sendable {
    /// The responses, one per request (one in all unless each image was sent alone).
    public var responses: [NetworkResponse]
    /// The file names of the images that were not uploaded, with why.
    public var failures: [(fileName: String, error: NetworkError)]

    /// Whether every image went up.
    public var succeeded: Bool { failures.isEmpty }
}

/// Options of an upload. The defaults are written next to each property.
public struct UploadOptions: Sendable {
    /// Use the path as it is, without the base URL. `false` by default.
    public var ignoresBaseURL = false
    /// Header fields added to (or replacing) the client's.
    public var headers: HeaderFields = [:]
    /// Sent as text fields before the files. None by default.
    public var parameters: Parameters = [:]
    /// Called as the body is sent.
    public var onProgress: (@Sendable (TransferProgress) -> Void)?
    /// The request's timeout; nil (the default) uses the client's.
    public var timeout: Duration?

    /// The default options.
    public init() {}
}

extension NetworkClient {
    /// POSTs a multipart form to `path`, streaming file parts from disk. The client's default
    /// parameters and `options.parameters` become text fields.
    public func upload(_ path: String, form: MultipartFormData, options: UploadOptions = .init()) async throws -> NetworkResponse {
        var form = form
        let fields = configuration.defaultParameters.merging(options.parameters) { $1 }
        var withFields = MultipartFormData(boundary: form.boundary)
        for name in fields.keys.sorted() { withFields.append(fields[name]?.description ?? "", name: name) }
        for part in form.parts { withFields.parts.append(part) }
        form = withFields

        var request = NetworkRequest(.post, path, headers: options.headers.merging(["Content-Type": form.contentType]))
        request.ignoresBaseURL = options.ignoresBaseURL
        request.body = form.body
        request.timeout = options.timeout
        return try await send(request, kind: .upload, uploadProgress: options.onProgress)
    }

    /// Uploads encoded images as the file parts of one form (`name` for each part, SJNetwork's
    /// `name`), or, with `separately`, one request per image.
    ///
    /// `mimeType` takes short forms (`jpg`, `JPEG`, `png`, without case) or full types. With a
    /// JPEG type and `compressionQuality` below 1 each image first goes through `reencode`; PNG
    /// ignores the quality, as in SJNetwork. The report names every image that did not go up:
    /// those whose re-encoding failed and, when a request fails, the images it carried.
    public func uploadImages(
        _ path: String, images: [UploadImage], name: String = "file", mimeType: String = "jpg",
        compressionQuality: Double = 1, reencode: JPEGReencoder? = nil, separately: Bool = false,
        options: UploadOptions = .init()
    ) async throws -> ImageUploadReport {
        guard let type = MIMEType.normalize(mimeType) else {
            throw NetworkError(.encodingFailed, url: nil, "unknown MIME type '\(mimeType)'")
        }
        var failures: [(fileName: String, error: NetworkError)] = []
        var prepared: [UploadImage] = []
        for image in images {
            guard type == "image/jpeg", compressionQuality < 1, let reencode else {
                prepared.append(image)
                continue
            }
            do {
                prepared.append(UploadImage(data: try reencode(image.data, max(0, compressionQuality)), fileName: image.fileName))
            } catch {
                failures.append((image.fileName, NetworkError(.encodingFailed, url: nil, "cannot re-encode \(image.fileName): \(error)", underlying: error)))
            }
        }
        let batches = separately ? prepared.map { [$0] } : (prepared.isEmpty ? [] : [prepared])
        var responses: [NetworkResponse] = []
        for batch in batches {
            var form = MultipartFormData()
            for image in batch { form.append(image.data, name: name, fileName: image.fileName, mimeType: type) }
            do {
                responses.append(try await upload(path, form: form, options: options))
            } catch {
                let failure = AsyncHTTPClientTransport.mapError(error, url: nil)
                for image in batch { failures.append((image.fileName, failure)) }
            }
        }
        return ImageUploadReport(responses: responses, failures: failures)
    }
}

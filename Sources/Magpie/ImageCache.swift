public import Foundation
public import MagpieCache
public import MagpieImage

/// Images in memory, then encoded bytes on disk (SDImageCache, YYImageCache).
///
/// Either tier may be absent: memory and disk, memory only, disk only, or (by passing no
/// cache to the pipeline) none. Memory holds decoded images by cost; disk holds encoded bytes
/// with optional metadata (HTTP validators and freshness).
///
/// ```swift
/// let cache = try ImageCache(directory: ImageCache.defaultDirectory)
/// try await cache.store(image, forKey: "avatar-42", in: .all)
/// if let (image, source) = try await cache.image(forKey: "avatar-42") { … }
/// ```
public final class ImageCache: Sendable {
    /// Which tiers an operation touches.
    public struct Tiers: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        public init(rawValue: Int) { self.rawValue = rawValue }
        public static let memory = Tiers(rawValue: 1)
        public static let disk = Tiers(rawValue: 2)
        public static let all: Tiers = [.memory, .disk]
    }

    /// Decoded images, by cost; nil for a disk-only cache.
    public let memory: MemoryCache<String, Image>?
    /// Encoded bytes; nil for a memory-only cache.
    public let disk: DiskCache?
    /// Encodes images stored to disk without their bytes: nil (the default) means PNG when the
    /// image has alpha and JPEG (quality 0.9) otherwise, as SDImageCache does.
    public let encoder: (any ImageEncoding)?

    /// A cache with these tiers.
    public init(memory: MemoryCache<String, Image>? = MemoryCache(), disk: DiskCache?, encoder: (any ImageEncoding)? = nil) {
        self.memory = memory
        self.disk = disk
        self.encoder = encoder
    }

    /// Memory and a disk cache in `directory`.
    public convenience init(directory: URL, memory: MemoryCache<String, Image>? = MemoryCache()) throws {
        self.init(memory: memory, disk: try DiskCache(directory: directory))
    }

    /// `$XDG_CACHE_HOME/magpie/images`, or `~/.cache/magpie/images`.
    public static var defaultDirectory: URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("magpie/images", isDirectory: true)
    }

    /// Memory and disk in ``defaultDirectory`` (memory only when that cannot be opened).
    public static let shared: ImageCache = {
        if let disk = try? DiskCache(directory: defaultDirectory) { return ImageCache(disk: disk) }
        return ImageCache(disk: nil)
    }()

    // MARK: - Reading

    /// The image in memory, without touching the disk.
    public func memoryImage(forKey key: String) -> Image? {
        memory?.value(forKey: key)
    }

    /// The image from memory, or decoded from disk (and then put in memory), with where it
    /// was found; nil when neither has it.
    public func image(forKey key: String, decoding options: ImageDecodingOptions = .default) async throws -> (Image, ImageSource)? {
        if let image = memory?.value(forKey: key) { return (image, .memory) }
        guard let data = try await disk?.data(forKey: key) else { return nil }
        let image = try Image(data: data, options: options)
        memory?.setValue(image, forKey: key, cost: image.cost)
        return (image, .disk)
    }

    /// The encoded bytes on disk.
    public func data(forKey key: String) async throws -> Data? {
        try await disk?.data(forKey: key)
    }

    /// Where `key` is cached: memory, disk, or nil.
    public func location(ofKey key: String) async -> ImageSource? {
        if memory?.contains(key) == true { return .memory }
        if (try? await disk?.contains(key)) == true { return .disk }
        return nil
    }

    // MARK: - Writing

    /// Stores `image` in the chosen tiers: on disk as `data` when given, else encoded.
    public func store(_ image: Image, data: Data? = nil, forKey key: String, in tiers: Tiers = .all) async throws {
        if tiers.contains(.memory) { memory?.setValue(image, forKey: key, cost: image.cost) }
        if tiers.contains(.disk), let disk {
            let bytes = try data ?? encode(image)
            try await disk.setData(bytes, forKey: key)
        }
    }

    /// Stores encoded bytes on disk only, with optional metadata.
    public func storeData(_ data: Data, forKey key: String, metadata: Data? = nil) async throws {
        try await disk?.setData(data, forKey: key, metadata: metadata)
    }

    /// The bytes `image` is stored as on disk when none are given.
    public func encode(_ image: Image) throws -> Data {
        if let encoder { return try image.encoded(using: encoder) }
        if image.hasAlpha { return try image.encoded(using: ImageEncoders.PNG()) }
        return try image.encoded(using: ImageEncoders.JPEG(quality: 0.9))
    }

    // MARK: - Removing

    /// Removes `key` from the chosen tiers.
    public func remove(forKey key: String, from tiers: Tiers = .all) async throws {
        if tiers.contains(.memory) { _ = memory?.removeValue(forKey: key) }
        if tiers.contains(.disk) { try await disk?.removeValue(forKey: key) }
    }

    /// Empties memory.
    public func clearMemory() {
        memory?.removeAll()
    }

    /// Empties the disk tier.
    public func clearDisk() async throws {
        try await disk?.removeAll()
    }
}

/// What went wrong in a cache, with the path involved and the cause.
public struct CacheError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The category of a ``CacheError``.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The cache directory or its index could not be opened or created.
        public static let cannotOpen = Kind("cannotOpen")
        /// Reading or writing a file failed.
        public static let io = Kind("io")
        /// The disk (or the file size limit) is full: the write was not stored, nothing else changed.
        public static let diskFull = Kind("diskFull")
        /// The free-space headroom would be passed even after trimming.
        public static let insufficientSpace = Kind("insufficientSpace")
        /// The SQLite index reported an error.
        public static let database = Kind("database")
        /// A write was asked of a read-only cache.
        public static let readOnly = Kind("readOnly")
        /// An impossible argument.
        public static let invalidArgument = Kind("invalidArgument")

        public var description: String { name }
    }

    /// The category.
    public let kind: Kind
    /// The file or directory involved, if any.
    public let path: String?
    /// What happened, in words.
    public let detail: String
    /// The `errno` or SQLite result code behind the error, if any.
    public let code: Int32?

    init(_ kind: Kind, path: String?, _ detail: String, code: Int32? = nil) {
        self.kind = kind
        self.path = path
        self.detail = detail
        self.code = code
    }

    public var description: String {
        if let path { return "\(detail) (\(path))" }
        return detail
    }
}

import CImageShims

/// Process-wide memory settings for programs that decode many large images.
public enum ImageMemory {
    /// Keeps memory freed by decoders in the process for the next decode, instead of handing
    /// it back to the system each time.
    ///
    /// A 12-megapixel progressive JPEG needs about 36 MB of coefficient buffers inside
    /// libjpeg. With glibc's defaults, a program decoding on worker threads returns them to
    /// the kernel after every image and takes the page faults again on the next: about a
    /// fifth of the decode time. This raises glibc's mmap threshold to 32 MB and lets up to
    /// `bytes` of freed memory stay in the heap (`mallopt`). It changes the whole process's
    /// allocator, so it is opt-in: the `magpie` tool calls it; a server that decodes images
    /// all day should too. Does nothing where glibc's `mallopt` is unavailable.
    ///
    /// - Returns: whether the allocator accepted the settings.
    @discardableResult
    public static func retainFreedMemory(upTo bytes: Int = 256 << 20) -> Bool {
        mg_retain_freed_memory(32 << 20, max(0, min(bytes, Int(Int32.max))), 0) == 0
    }
}

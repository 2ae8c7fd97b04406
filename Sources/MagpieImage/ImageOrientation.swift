/// The EXIF orientation: how the stored pixels must be turned to be seen upright.
///
/// Raw values are the EXIF tag's (1...8). Cases are named after the transformation a
/// viewer applies, as UIKit's `UIImage.Orientation` is.
public enum ImageOrientation: Int, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// 1: stored upright.
    case up = 1
    /// 2: mirrored left to right.
    case upMirrored = 2
    /// 3: turned 180°.
    case down = 3
    /// 4: mirrored top to bottom.
    case downMirrored = 4
    /// 5: mirrored along the top-left to bottom-right diagonal (transposed).
    case leftMirrored = 5
    /// 6: must be turned 90° clockwise to be upright.
    case right = 6
    /// 7: transposed along the other diagonal (transverse).
    case rightMirrored = 7
    /// 8: must be turned 90° counter-clockwise to be upright.
    case left = 8

    /// Whether showing the image upright exchanges its width and height.
    public var swapsDimensions: Bool { rawValue >= 5 }

    /// The EXIF value.
    public var description: String { String(rawValue) }
}

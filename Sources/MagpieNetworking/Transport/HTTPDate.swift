package import Foundation

/// HTTP dates (RFC 9110 §5.6.7): the IMF-fixdate form, and the two obsolete forms a recipient
/// must still accept (RFC 850 and asctime). Used for Expires, Date and cookie expiry.
package enum HTTPDate {
    private static let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]

    /// The date `text` names, or nil when it is not an HTTP date.
    package static func parse(_ text: String) -> Date? {
        for format in formats {
            let formatter = DateFormatter()  // not shared: DateFormatter is not Sendable
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}

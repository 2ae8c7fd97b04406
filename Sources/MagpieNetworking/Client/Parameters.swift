public import Foundation

/// A parameter value: what JSON can hold.
public enum ParameterValue: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case array([ParameterValue])
    case object([String: ParameterValue])
    case null

    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// The value as it appears in a query or form: numbers and booleans as text.
    public var description: String {
        switch self {
        case .string(let s): s
        case .int(let i): String(i)
        case .double(let d): d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d)
        case .bool(let b): b ? "true" : "false"
        case .null: ""
        case .array(let a): a.map(\.description).joined(separator: ",")
        case .object(let o): o.keys.sorted().map { "\($0)=\(o[$0]?.description ?? "")" }.joined(separator: "&")
        }
    }

    /// A JSON-compatible Foundation object.
    var jsonObject: Any {
        switch self {
        case .string(let s): s
        case .int(let i): i
        case .double(let d): d
        case .bool(let b): b
        case .null: NSNull()
        case .array(let a): a.map(\.jsonObject)
        case .object(let o): o.mapValues(\.jsonObject)
        }
    }
}

/// Request parameters by name.
public typealias Parameters = [String: ParameterValue]

/// How parameters travel.
public enum ParameterEncoding: String, Sendable, Hashable {
    /// In the URL's query string.
    case query
    /// In the body as `application/x-www-form-urlencoded`.
    case form
    /// In the body as a JSON object.
    case json

    /// AFNetworking's choice: the query for GET, HEAD and DELETE, a form body otherwise.
    static func `default`(for method: HTTPMethod) -> ParameterEncoding {
        [.get, .head, .delete].contains(method) ? .query : .form
    }
}

enum ParameterSerialization {
    /// Pairs in a stable order: keys sorted; arrays as `key[]`, objects as `key[sub]`.
    static func pairs(_ parameters: Parameters) -> [(String, String)] {
        var result: [(String, String)] = []
        func add(_ key: String, _ value: ParameterValue) {
            switch value {
            case .array(let items): for item in items { add(key + "[]", item) }
            case .object(let object): for sub in object.keys.sorted() { add("\(key)[\(sub)]", object[sub] ?? .null) }
            default: result.append((key, value.description))
            }
        }
        for key in parameters.keys.sorted() { add(key, parameters[key] ?? .null) }
        return result
    }

    /// Characters left as they are in a query component (RFC 3986 unreserved).
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// `a=1&b=x%20y`, keys sorted.
    static func query(_ parameters: Parameters) -> String {
        pairs(parameters).map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    static func json(_ parameters: Parameters, url: URL?) throws -> Data {
        do {
            return try JSONSerialization.data(withJSONObject: parameters.mapValues(\.jsonObject), options: [.sortedKeys])
        } catch {
            throw NetworkError(.encodingFailed, url: url, "cannot encode the parameters as JSON: \(error)")
        }
    }
}

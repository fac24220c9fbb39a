// Trimming without Foundation's NSString bridge (`trimmingCharacters(in:)` is not in
// FoundationEssentials, and the full Foundation brings 34 MB of ICU data into each static binary).

extension StringProtocol {
    /// The text without leading and trailing white space and line breaks (`Character.isWhitespace`:
    /// spaces, tabs, CR, LF and the other Unicode white space), like
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }

    /// The text without leading and trailing spaces and tabs (line breaks kept), like
    /// `trimmingCharacters(in: .whitespaces)`.
    public func trimmingSpaces() -> String {
        let blank: (Character) -> Bool = { $0.isWhitespace && !$0.isNewline }
        guard let first = firstIndex(where: { !blank($0) }), let last = lastIndex(where: { !blank($0) }) else { return "" }
        return String(self[first...last])
    }
}

extension String {
    /// The text of a C buffer a call filled (`getcwd`, `snprintf`, a library's error text): the bytes
    /// before its first NUL (all of them without one), decoded as UTF-8 with invalid bytes replaced.
    public init(nulTerminated buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The text of a C `char[N]` array Swift imports as a tuple (`v4l2_capability.card`, `dirent.d_name`,
    /// libcamera's `pb_lc_camera_info.id`): the bytes before its first NUL (all N without one), decoded as
    /// UTF-8 with invalid bytes replaced.
    public init<T>(cArray tuple: T) {
        self = withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }
}

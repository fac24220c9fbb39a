import BoothCore
import BoothJPEG

/// Corrupt frames as cheap webcams send them, made by the ``SimulatedCamera`` on purpose:
/// every ``every``th frame is spoilt, the ``kinds`` taken in turn. `photoboothd --simulate
/// --corrupt-frames N[:KIND,…]` and tests use it to prove the booth drops such frames.
public struct FrameCorruption: Sendable, Hashable, CustomStringConvertible {
    /// How a frame is spoilt. The raw value is the name used by `--corrupt-frames`.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The first half of the frame only (MJPEG: cut where it does not end in EOI or zeros).
        /// Arrives as ``FrameDefect/missingEndOfImage`` (MJPEG) or ``FrameDefect/shortFrame``.
        case truncated
        /// MJPEG: the whole frame but its final EOI (FF D9); YUYV/RGB24: without its last 2 bytes.
        /// Arrives as ``FrameDefect/missingEndOfImage`` or ``FrameDefect/shortFrame``.
        case noEndMarker = "no-eoi"
        /// `bytesused` 0. Arrives as ``FrameDefect/empty``.
        case empty
        /// Random bytes, a third of the frame's length, not starting FF D8.
        /// Arrives as ``FrameDefect/missingStartOfImage`` or ``FrameDefect/shortFrame``.
        case garbage
        /// MJPEG: headers intact, the entropy-coded data cut to a quarter and EOI put back: passes
        /// the arrival check and fails the capture's full decode (TurboJPEG warns). YUYV/RGB24: as ``garbage``.
        case corruptData = "corrupt-data"
    }

    /// Every `every`th frame (1 = all) is corrupt: the frames with index `every - 1`,
    /// `2 * every - 1`, … counted from the stream's start.
    public var every: Int
    /// The kinds, taken in turn (never empty).
    public var kinds: [Kind]

    /// - Parameters:
    ///   - every: at least 1 (smaller values are 1).
    ///   - kinds: taken in turn; empty means every kind.
    public init(every: Int, kinds: [Kind] = Kind.allCases) {
        self.every = max(1, every)
        self.kinds = kinds.isEmpty ? Kind.allCases : kinds
    }

    /// Parses `N` or `N:KIND,KIND…` (e.g. `"5"`, `"3:no-eoi,empty"`); nil when malformed.
    public init?(parsing text: String) {
        let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let first = parts.first, let n = Int(first), n >= 1 else { return nil }
        var kinds: [Kind] = []
        if parts.count == 2 {
            for name in parts[1].split(separator: ",", omittingEmptySubsequences: false) {
                guard let kind = Kind(rawValue: String(name)) else { return nil }
                kinds.append(kind)
            }
            if kinds.isEmpty { return nil }
        }
        self.init(every: n, kinds: kinds)
    }

    /// `"1 frame in 5: truncated, no-eoi"`.
    public var description: String {
        let which = every == 1 ? "every frame" : "1 frame in \(every)"
        return "\(which): " + kinds.map(\.rawValue).joined(separator: ", ")
    }

    /// The kind for frame `index` (counted from the stream's start), nil when it stays whole.
    public func kind(forFrame index: UInt64) -> Kind? {
        guard (index + 1) % UInt64(every) == 0 else { return nil }
        let nth = (index + 1) / UInt64(every) - 1
        return kinds[Int(nth % UInt64(kinds.count))]
    }

    /// `bytes`, a whole frame of `format`, spoilt as `kind`. `seed` makes the garbage differ
    /// from frame to frame (and repeat for the same seed).
    public static func apply(_ kind: Kind, to bytes: [UInt8], format: PixelFormat, seed: UInt64) -> [UInt8] {
        switch kind {
        case .empty:
            return []
        case .truncated:
            var end = bytes.count / 2
            if format == .mjpeg {
                // Not ending in EOI or zero padding, or it would look whole.
                while end > 2, bytes[end - 1] == 0 || (bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9) { end -= 1 }
            }
            return Array(bytes.prefix(end))
        case .noEndMarker:
            guard format == .mjpeg else { return Array(bytes.dropLast(2)) }
            var end = bytes.count
            while end > 0, bytes[end - 1] == 0 { end -= 1 }
            if end >= 2, bytes[end - 2] == 0xFF, bytes[end - 1] == 0xD9 { end -= 2 }
            while end > 2, bytes[end - 1] == 0 || (bytes[end - 2] == 0xFF && bytes[end - 1] == 0xD9) { end -= 1 }
            return Array(bytes.prefix(end))
        case .garbage:
            return garbage(count: max(bytes.count / 3, 1), seed: seed)
        case .corruptData:
            guard format == .mjpeg, let sos = try? JPEGMarkers.segments(bytes).last else {
                return garbage(count: max(bytes.count / 3, 1), seed: seed)
            }
            let scanStart = sos.range.upperBound
            var end = scanStart + max(1, (bytes.count - scanStart) / 4)
            // No partial marker or stuffed byte pair left open before the EOI.
            while end > scanStart + 1, bytes[end - 1] == 0xFF { end -= 1 }
            return Array(bytes.prefix(end)) + [0xFF, 0xD9]
        }
    }

    /// `count` pseudo-random bytes (SplitMix64 from `seed`), the first never 0xFF.
    static func garbage(count: Int, seed: UInt64) -> [UInt8] {
        var state = seed &+ 0x9E37_79B9_7F4A_7C15
        var out = [UInt8](repeating: 0, count: count)
        for i in 0..<count {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            out[i] = UInt8(truncatingIfNeeded: z ^ (z >> 31))
        }
        if out[0] == 0xFF { out[0] = 0x00 }
        return out
    }
}

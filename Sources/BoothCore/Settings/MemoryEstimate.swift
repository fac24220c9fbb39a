/// What a set of settings makes the booth hold in memory, from the sizes they set, and the limit it
/// is checked against: by every file check (`photoboothctl config validate`, `config set`, the daemon's
/// start, each reload of the file) and again by the runtime for the settings a reload hands it.
///
/// Each part is pixels times the bytes a pixel costs in what the booth keeps for it; the figures are the
/// resident memory `photoboothd --simulate` reached (`/usr/bin/time -f %M`, two sessions) at two sizes,
/// divided by the pixels between them (docs/settings.md: "What the settings make the booth hold"):
/// - the preview file (`preview.size`, with `preview.file` set): its drawing (XRGB8888), the drawing
///   presented, the copy the encoder reads and TurboJPEG's buffer: 12 bytes (800x480 → 3840x2160:
///   58 → 151 MB; the 16384x16384 took 3.25 GB, 8000x8000 825 MB);
/// - the live view (`camera.preview_size`): the camera's buffers, the frames kept and each screen's
///   conversion: 16 bytes (1280x720 → 3840x2160 with the still at the same size: 58 → 199 MB, the
///   still's 3.5 bytes taken off);
/// - the still (`camera.capture_size`, a V4L2 or libcamera camera's; a gphoto2 camera's stills are its
///   own JPEGs): the frame and its encode: 3.5 bytes (1280x720 → 6000x4000: 58 → 137 MB);
/// - the composed picture (`picture.size` at `picture.dpi`, when sessions are composed): its I420 canvas,
///   a capture decoded for its slot and the picture's JPEG: 3.5 bytes (1.5 measured: 4x6 in at 300 →
///   1000 dpi, 70 → 102 MB, with the decode of a capture as large as its slot counted on top);
/// - the printed page (`print.media` at `print.dpi`, with `print.mode` not off): the picture decoded
///   to RGB, turned upright, the page and its JPEG: 10 bytes (counted from PrintRenderer's buffers).
public struct MemoryEstimate: Sendable, Hashable {
    /// One thing the booth holds at a size the settings set.
    public struct Part: Sendable, Hashable {
        /// The keys whose values make it, the one to change first.
        public var keys: [String]
        /// What it is, for messages: `"the preview file's drawing"`.
        public var what: String
        /// Pixels held.
        public var pixels: Int
        /// Bytes per pixel, in tenths (35: 3.5 bytes).
        public var tenthsPerPixel: Int
        /// Bytes.
        public var bytes: Int { pixels * tenthsPerPixel / 10 }
    }

    /// What the daemon holds whatever the sizes: about 75 MB (the figure for the defaults; 58 MB
    /// measured with `--simulate`), bytes. A real screen's drawing comes on top, within the limit's margin.
    public static let base = 75_000_000
    /// The most the settings may make the booth hold, bytes: 512 MB, half of a Raspberry Pi 3's 1 GB, so
    /// the system, its page cache and CUPS keep the other half (a Pi Zero 2 W's 512 MB is then all of it:
    /// keep the sizes small there). Sizes a booth needs stay well under it: a 4K preview file, a full-HD
    /// live view, 24 MP stills and 4x6 in pictures composed and printed at 600 dpi make about 410 MB.
    public static let limit = 512_000_000

    /// The parts, largest first.
    public var parts: [Part]

    /// The estimate: ``base`` and every part, bytes.
    public var total: Int { parts.reduce(MemoryEstimate.base) { $0 + $1.bytes } }

    /// True when ``total`` is over ``limit``.
    public var isOverLimit: Bool { total > MemoryEstimate.limit }

    /// Why these settings are refused, each part with its keys as `cite` writes them (`preview.size =
    /// 7680x4320 (booth.conf:5)`); nil when the estimate is within the limit.
    public func refusal(cite: (String) -> String) -> String? {
        guard isOverLimit else { return nil }
        let listed = parts.filter { $0.bytes >= 1_000_000 }.map { part in
            "\(part.what) at \(part.keys.map(cite).joined(separator: " and ")): \(part.bytes / 1_000_000) MB"
        }
        return "these settings would make the booth hold about \(total / 1_000_000) MB, more than its limit of "
            + "\(MemoryEstimate.limit / 1_000_000) MB (\(MemoryEstimate.base / 1_000_000) MB for the daemon itself; "
            + listed.joined(separator: "; ") + "); make the largest smaller"
    }
}

extension Settings {
    /// What these settings make the booth hold (``MemoryEstimate``), part by part.
    public var memoryEstimate: MemoryEstimate {
        var parts: [MemoryEstimate.Part] = []
        func add(_ keys: [String], _ what: String, _ size: FrameSize, tenths: Int) {
            parts.append(MemoryEstimate.Part(keys: keys, what: what, pixels: size.width * size.height, tenthsPerPixel: tenths))
        }
        if !preview.file.isEmpty { add(["preview.size"], "the preview file's drawing", preview.size, tenths: 120) }
        add(["camera.preview_size"], "the live view", camera.previewSize, tenths: 160)
        if camera.backend != .gphoto2 { add(["camera.capture_size"], "the still", camera.captureSize, tenths: 35) }
        let inches: (short: Double, long: Double)? = picture.size.inches ?? print.mediaSize.map {
            (min($0.widthMillimetres, $0.heightMillimetres) / 25.4, max($0.widthMillimetres, $0.heightMillimetres) / 25.4)
        }
        if session.shots > 1 || picture.composeSingleShot, let inches {
            let dpi = Double(picture.dpi.dotsPerInch(printDPI: print.dpi))
            let keys = [picture.dpi == .print ? "print.dpi" : "picture.dpi", picture.size == .media ? "print.media" : "picture.size"]
            add(keys, "the composed picture", FrameSize(width: Int(inches.short * dpi), height: Int(inches.long * dpi)), tenths: 35)
        }
        if print.mode != .off, let media = print.mediaSize {
            add(["print.dpi", "print.media"], "the printed page", media.pixels(dpi: print.dpi), tenths: 100)
        }
        return MemoryEstimate(parts: parts.sorted { $0.bytes > $1.bytes })
    }

    /// The estimate over its limit, as an error naming every part's keys where they were set.
    func memoryDiagnostics(_ sources: SettingSources) -> [Diagnostic] {
        let estimate = memoryEstimate
        guard let message = estimate.refusal(cite: { sources.cite($0, in: self) }) else { return [] }
        return [sources.diagnostic(keys: estimate.parts.flatMap(\.keys), message: message)]
    }
}

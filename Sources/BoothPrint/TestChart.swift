import BoothCore
import BoothJPEG
import BoothPorts
import BoothStorage

extension PrintWorker {
    /// A test chart (`photoboothctl test-print` without a file): colour bars over a grey ramp with a
    /// black border, 1800x1200 pixels, JPEG quality 90 (TurboJPEG).
    /// - Throws: ``JPEGError`` when the encoder fails.
    public static func testChart() throws -> [UInt8] {
        let w = 1800, h = 1200
        let bars: [(UInt8, UInt8, UInt8)] = [(255, 255, 255), (255, 255, 0), (0, 255, 255), (0, 255, 0),
                                             (255, 0, 255), (255, 0, 0), (0, 0, 255), (0, 0, 0)]
        var rgb = [UInt8](repeating: 0, count: w * h * 3)
        for y in 0..<h {
            for x in 0..<w {
                var c: (UInt8, UInt8, UInt8)
                if x < 20 || y < 20 || x >= w - 20 || y >= h - 20 { c = (0, 0, 0) }
                else if y < h * 2 / 3 { c = bars[x * bars.count / w] }
                else { let g = UInt8(x * 255 / (w - 1)); c = (g, g, g) }
                let o = (y * w + x) * 3
                rgb[o] = c.0; rgb[o + 1] = c.1; rgb[o + 2] = c.2
            }
        }
        let frame = Frame(format: .rgb24, size: FrameSize(width: w, height: h), bytesPerLine: w * 3, bytes: rgb,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return try JPEGEncoder().encode(frame, quality: 90)
    }
}

extension PrintEntry {
    /// A journal request as `prints list` shows it.
    public init(_ r: PrintRequest) {
        self.init(id: r.id, source: r.source, state: r.state.rawValue, jobID: r.jobID, copies: r.copies, media: r.media,
                  requestedAt: StatsStore.dateText(Int(r.requestedAt)), note: r.note)
    }
}

import BoothCore
import BoothJPEG
import BoothRaster
import BoothSystem
import CYUV
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// Composes a session's captures into one picture, JPEG to JPEG, the fast way:
///
/// 1. each capture's header is read (`tjDecompressHeader3`) and the layout planned (`PicturePlan`);
/// 2. each capture is decoded straight to its Y'CbCr planes (`tjDecompressToYUVPlanes`, no colour
///    conversion) at the smallest TurboJPEG scale of 1/1, 1/2, 1/4, 1/8 that stays at or above its
///    slot's size, and resampled into its slot on an I420 canvas with libyuv (`ScalePlane`: area
///    averaging when shrinking by more than 2×, else bilinear; chroma shrunk by at most 2× sampled,
///    see `I420Canvas.draw`);
/// 3. the background (colour or image), the footer text (FreeType) and the overlay (`I420Blend`)
///    are drawn once per sheet and footer text and kept on the reused canvas; the images are read
///    from their files then (a JPEG background decoded at the TurboJPEG scale the sheet needs) and
///    not kept at their files' size: what stays is the sheet-sized canvas (and, with an overlay, the
///    overlay at the sheet's size and the canvas's base);
/// 4. the canvas is encoded once from its planes (`tjCompressFromYUVPlanes`, 4:2:0).
///
/// Not thread-safe (TurboJPEG handles and FreeType faces are not): one composer per thread, or
/// `LockedPictureComposer` to share one. With `options.threads == 2` the decoding and scaling of
/// the captures is split over two threads of its own (Dispatch's `concurrentPerform`, not the
/// Swift concurrency pool).
public final class PictureComposer {
    public let options: PictureOptions
    private let font: Font?

    private let encoder: JPEGEncoder
    private let workers: [Worker]
    private var canvas: I420Canvas?
    /// The canvas with background and footer only, kept when there is an overlay (the overlay's
    /// blend changes pixels the next picture does not redraw).
    private var base: I420Canvas?
    private var overlay: Overlay?
    private var baseKey: BaseKey?
    /// Captures decoded ahead (``prepare(capture:index:count:)``), by shot index: their bytes, the scale
    /// they were decoded at, and the planes; used by the next compose for the same bytes and scale, then dropped.
    private var prepared: [Int: (jpeg: [UInt8], scale: JPEGScale, planes: YUVPlanes)] = [:]

    private struct BaseKey: Hashable {
        var sheet: FrameSize
        var destinations: [PixelRect]
        var texts: [String]
    }

    /// One decoding thread's TurboJPEG handle and plane buffer. `@unchecked Sendable`: each worker
    /// is used by exactly one iteration of `concurrentPerform` at a time (its index), never shared.
    private final class Worker: @unchecked Sendable {
        let decoder: JPEGDecoder
        var planes = YUVPlanes()
        var error: PictureError?
        // A slot over a quarter of its capture (a large sheet's) needs the whole capture: up to a supported camera's still.
        init() throws(TurboJPEGError) { decoder = try JPEGDecoder(maxPixels: JPEGDecoder.largestStillPixels) }
    }

    private enum BackgroundImage {
        case jpeg(YUVPlanes)
        case png(I420Canvas)
    }

    /// Loads what the options name: the font (when there are footer lines); the overlay PNG and the
    /// background image (JPEG or PNG, by its first bytes; a JPEG turned upright as its Exif
    /// Orientation says, `JPEGRotator.upright`) are read once here to check them, and again, at the
    /// sheet's scale, when a sheet is first drawn (they are not kept at their files' size).
    /// - Throws: `PictureError.font` (FreeType `FT_New_Face`), `.png` (libpng), `.backgroundImage`
    ///   (file unreadable or JPEG not decodable), `.encode`/`.decode` when TurboJPEG cannot make a handle.
    public init(options: PictureOptions) throws(PictureError) {
        self.options = options
        if options.activeFooterLines.isEmpty {
            font = nil
        } else {
            do { font = try Font(path: options.font) } catch { throw PictureError.font(error) }
        }
        if !options.overlay.isEmpty { _ = try BGRAImage(path: options.overlay) }
        if !options.backgroundImage.isEmpty {
            _ = try PictureComposer.loadBackground(options.backgroundImage, sheet: nil)
        }
        do {
            encoder = try JPEGEncoder()
            workers = try (0..<max(1, min(2, options.threads))).map { _ throws(TurboJPEGError) in try Worker() }
        } catch {
            throw PictureError.encode(message: error.description)
        }
    }

    /// The geometry a picture of captures of `captureSizes` gets.
    public func plan(captureSizes: [FrameSize]) -> PicturePlan {
        PicturePlan(layout: PictureLayout(options.layout, shotCount: captureSizes.count), captureSizes: captureSizes,
                    sheetInches: (options.sheetShortInches, options.sheetLongInches), dpi: options.dpi,
                    marginMillimetres: options.marginMillimetres, footerLines: options.activeFooterLines.count,
                    fit: options.fit)
    }

    /// The footer lines for a picture taken at `takenAt`: `{date}` replaced by the date written
    /// with `options.dateFormat` (strftime(3), local time zone); empty lines left out.
    public func footerTexts(takenAt: Date) -> [String] {
        let date = PictureComposer.format(takenAt, options.dateFormat)
        return options.activeFooterLines.map { $0.replacing("{date}", with: date) }
    }

    /// Composes `captures` (JPEG bytes, upright, in shot order) into one JPEG picture
    /// (`options.quality`, 4:2:0, JFIF) of the sheet's size in pixels.
    /// - Throws: `PictureError.noCaptures`; `.decode(index:message:)` for a capture TurboJPEG cannot
    ///   decode (or warns about: corrupt or truncated data); `.encode` when `tjCompressFromYUVPlanes` fails.
    public func compose(captures: [[UInt8]], takenAt: Date) throws(PictureError) -> [UInt8] {
        let plan = try render(captures: captures, takenAt: takenAt)
        guard let canvas else { throw PictureError.encode(message: "no canvas") }
        let lumaCount = canvas.lumaStride * canvas.lumaRows, chromaCount = canvas.chromaStride * canvas.chromaRows
        do {
            return try encoder.encodeI420(y: UnsafeBufferPointer(start: canvas.y, count: lumaCount),
                                          yStride: canvas.lumaStride,
                                          cb: UnsafeBufferPointer(start: canvas.cb, count: chromaCount),
                                          cr: UnsafeBufferPointer(start: canvas.cr, count: chromaCount),
                                          chromaStride: canvas.chromaStride, size: plan.sheet, quality: options.quality)
        } catch {
            throw PictureError.encode(message: String(describing: error))
        }
    }

    /// Decodes capture `index` (0-based) of a picture of `count` captures for its slot now (the plan made as if
    /// every capture had this one's size, as they do from one camera), so that ``compose(captures:takenAt:)``
    /// only draws it. A capture that does not decode is left for compose to report.
    public func prepare(capture: [UInt8], index: Int, count: Int) {
        guard count > 0, (0..<count).contains(index), let header = try? workers[0].decoder.header(capture) else { return }
        let plan = plan(captureSizes: Array(repeating: header.size, count: count))
        let mine = plan.placements.filter { $0.capture == index }
        guard !mine.isEmpty else { return }
        let scale = Self.scale(for: mine)
        var planes = prepared[index]?.planes ?? YUVPlanes()
        do { try workers[0].decoder.decodeYUVPlanes(capture, scale: scale, into: &planes) } catch { return }
        prepared[index] = (capture, scale, planes)
    }

    /// The one decode scale serving every slot of a capture (a strip shows it twice): the largest they need.
    static func scale(for placements: [CapturePlacement]) -> JPEGScale {
        placements.map { decodeScale(crop: $0.crop, destination: $0.destination) }.min(by: { $0.denominator < $1.denominator }) ?? .full
    }

    /// Composes onto the canvas without encoding; returns the plan. For `compose` and the tests.
    func render(captures: [[UInt8]], takenAt: Date) throws(PictureError) -> PicturePlan {
        guard !captures.isEmpty else { throw PictureError.noCaptures }
        var headers: [JPEGHeader] = []
        for (i, capture) in captures.enumerated() {
            do { headers.append(try workers[0].decoder.header(capture)) } catch {
                throw PictureError.decode(index: i, message: error.description)
            }
        }
        let plan = plan(captureSizes: headers.map(\.size))
        let canvas: I420Canvas
        if let existing = self.canvas, existing.size == plan.sheet {
            canvas = existing
        } else {
            canvas = I420Canvas(size: plan.sheet)
            self.canvas = canvas
            base = nil
            overlay = nil
            baseKey = nil
        }
        let texts = footerTexts(takenAt: takenAt)
        let key = BaseKey(sheet: plan.sheet, destinations: plan.placements.map(\.destination), texts: texts)
        if key != baseKey {
            try drawBase(plan, texts: texts, on: canvas)
            if !options.overlay.isEmpty {
                let copy = base ?? I420Canvas(size: plan.sheet)
                copy.copy(from: canvas)
                base = copy
                if overlay == nil { overlay = Overlay(try BGRAImage(path: options.overlay), size: plan.sheet) }
            }
            baseKey = key
        } else if let base {
            canvas.copy(from: base)
        }
        try drawCaptures(captures, headers: headers, plan: plan, on: canvas)
        prepared = [:]
        if let overlay { canvas.blend(overlay, rows: overlay.rows) }
        return plan
    }

    /// The canvas's planes, for tests: (Y, Cb, Cr, luma stride, chroma stride).
    func canvasPlanes() -> (y: [UInt8], cb: [UInt8], cr: [UInt8], lumaStride: Int, chromaStride: Int)? {
        guard let c = canvas else { return nil }
        return (Array(UnsafeBufferPointer(start: c.y, count: c.lumaStride * c.lumaRows)),
                Array(UnsafeBufferPointer(start: c.cb, count: c.chromaStride * c.chromaRows)),
                Array(UnsafeBufferPointer(start: c.cr, count: c.chromaStride * c.chromaRows)),
                c.lumaStride, c.chromaStride)
    }

    /// The TurboJPEG scale for showing `crop` (full-size pixels) in `destination`: the smallest of
    /// 1/8, 1/4, 1/2 whose scaled crop is still at least the destination's size, else 1/1.
    public static func decodeScale(crop: PixelRect, destination: PixelRect) -> JPEGScale {
        JPEGScale.smallest(from: crop.size, covering: destination.size)
    }

    private func drawBase(_ plan: PicturePlan, texts: [String], on canvas: I420Canvas) throws(PictureError) {
        let sheet = PixelRect(x: 0, y: 0, width: plan.sheet.width, height: plan.sheet.height)
        canvas.fill(sheet, YCbCr(options.background))
        let background = options.backgroundImage.isEmpty ? nil : try PictureComposer.loadBackground(options.backgroundImage, sheet: sheet)
        switch background {
        case .jpeg(let planes):
            _ = planes.withSource { source in
                let (crop, _) = PicturePlan.place(source.size, in: sheet, fit: false)
                canvas.draw(source, crop: crop, into: sheet)
            }
        case .png(let image):
            let (crop, _) = PicturePlan.place(image.size, in: sheet, fit: false)
            canvas.draw(image.asSource, crop: crop, into: sheet)
        case nil:
            break
        }
        guard let font, !texts.isEmpty else { return }
        let color = YCbCr(options.textColor)
        for band in plan.footers {
            // Each line on one line of its own: a line too wide for the band is drawn smaller rather
            // than wrapped (wrapping would push the lines below it off the sheet); then all of them
            // smaller again if together they are taller than the band.
            var heights = texts.indices.map { plan.lineHeights[min($0, plan.lineHeights.count - 1)] }
            var masks = texts.indices.map { fittedMask(font, texts[$0], pixelHeight: &heights[$0], width: band.width) }
            let natural = masks.reduce(0) { $0 + $1.height }
            if natural > band.height, natural > 0 {
                masks = texts.indices.map { i in
                    var h = max(6, heights[i] * band.height / natural)
                    return fittedMask(font, texts[i], pixelHeight: &h, width: band.width)
                }
            }
            let total = masks.reduce(0) { $0 + $1.height }
            var y = band.y + max(0, (band.height - total) / 2)
            for mask in masks {
                canvas.blend(mask, x: band.x + (band.width - mask.width) / 2, y: y, color: color)
                y += mask.height
            }
        }
    }

    /// `text` rendered on one line at most `pixelHeight` pixels high and at most `width` wide: the
    /// size is lowered (and written back) until FreeType no longer wraps it.
    private func fittedMask(_ font: Font, _ text: String, pixelHeight: inout Int, width: Int) -> AlphaMask {
        var mask = font.mask(text, pixelHeight: pixelHeight, maxWidth: width)
        while pixelHeight > 6, mask.height > font.mask("Ag", pixelHeight: pixelHeight).height {
            pixelHeight = max(6, pixelHeight * 7 / 8)
            mask = font.mask(text, pixelHeight: pixelHeight, maxWidth: width)
        }
        return mask
    }

    private func drawCaptures(_ captures: [[UInt8]], headers: [JPEGHeader], plan: PicturePlan,
                              on canvas: I420Canvas) throws(PictureError) {
        let used = Array(Set(plan.placements.map(\.capture))).sorted()
        let placements = plan.placements
        let workers = self.workers
        // Captures decoded ahead for these bytes at the scale their slots need now: drawn without a decode.
        let ahead = PreparedPlanes(prepared.compactMap { index, p -> (Int, YUVPlanes)? in
            guard index < captures.count, p.jpeg == captures[index],
                  p.scale == PictureComposer.scale(for: placements.filter { $0.capture == index }) else { return nil }
            return (index, p.planes)
        })
        let work: @Sendable (Int) -> Void = { w in
            let worker = workers[w]
            worker.error = nil
            for index in stride(from: w, to: used.count, by: workers.count) {
                let capture = used[index]
                let mine = placements.filter { $0.capture == capture }
                // One decode serves every slot of this capture (a strip shows it twice).
                let scale = PictureComposer.scale(for: mine)
                let planes: YUVPlanes
                if let decoded = ahead.planes[capture] {
                    planes = decoded
                } else {
                    do {
                        try worker.decoder.decodeYUVPlanes(captures[capture], scale: scale, into: &worker.planes)
                    } catch {
                        worker.error = .decode(index: capture, message: String(describing: error))
                        return
                    }
                    planes = worker.planes
                }
                _ = planes.withSource { source in
                    for p in mine {
                        let d = scale.denominator
                        let x = (p.crop.x / d) & ~1, y = (p.crop.y / d) & ~1
                        let crop = PixelRect(x: x, y: y, width: max(1, min(source.size.width - x, p.crop.width / d)),
                                             height: max(1, min(source.size.height - y, p.crop.height / d)))
                        canvas.draw(source, crop: crop, into: p.destination)
                    }
                }
            }
        }
        if workers.count > 1, used.count > 1 {
            DispatchQueue.concurrentPerform(iterations: workers.count, execute: work)
        } else {
            for w in workers.indices { work(w) }
        }
        for worker in workers { if let error = worker.error { throw error } }
    }

    /// The background image's pixels: a PNG at its size, a JPEG upright and decoded at the smallest
    /// TurboJPEG scale that still covers `sheet` (at 1/8 when `sheet` is nil: the check at init).
    private static func loadBackground(_ path: String, sheet: PixelRect?) throws(PictureError) -> BackgroundImage {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw PictureError.backgroundImage(path: path, message: "cannot read the file")
        }
        let bytes = [UInt8](data)
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            let image = try BGRAImage(path: path)
            let planes = I420Canvas(size: image.size)
            image.bytes.withUnsafeBufferPointer { src in
                guard let s = src.baseAddress else { return }
                ARGBToJ420(s, Int32(image.size.width * 4), planes.y, Int32(planes.lumaStride), planes.cb,
                           Int32(planes.chromaStride), planes.cr, Int32(planes.chromaStride),
                           Int32(image.size.width), Int32(image.size.height))
            }
            return .png(planes)
        }
        do {
            // Upright as its Exif Orientation says (losslessly where the size is whole MCUs, else
            // re-encoded at quality 95): the file stays as it is, only the planes are turned.
            let upright = try JPEGRotator().upright(bytes, quality: 95).bytes
            let decoder = try JPEGDecoder()
            // The check at init decodes at 1/8: the whole file is read and checked, in an eighth of the memory.
            var scale = JPEGScale.eighth
            if let sheet {
                let size = try decoder.header(upright).size
                let (crop, _) = PicturePlan.place(size, in: sheet, fit: false)
                scale = decodeScale(crop: crop, destination: sheet)
            }
            var planes = YUVPlanes()
            try decoder.decodeYUVPlanes(upright, scale: scale, into: &planes)
            return .jpeg(planes)
        } catch {
            throw PictureError.backgroundImage(path: path, message: String(describing: error))
        }
    }

    /// `date` in `format` (strftime(3)), local time (BoothSystem's ``TimeText/format(_:_:in:)``).
    static func format(_ date: Date, _ format: String) -> String {
        TimeText.format(Int64(date.timeIntervalSince1970.rounded(.down)), format, in: .local)
    }
}

/// Planes decoded ahead, handed to the decoding threads (read only there). `@unchecked Sendable`: built
/// before `concurrentPerform` and only read during it.
private final class PreparedPlanes: @unchecked Sendable {
    let planes: [Int: YUVPlanes]
    init(_ pairs: [(Int, YUVPlanes)]) { planes = Dictionary(uniqueKeysWithValues: pairs) }
}

/// A `PictureComposer` behind a lock, shareable between threads: one picture composed at a time.
/// Its `composePicture(captures:takenAt:)` has the shape the runtime's picture-composing protocol asks for.
public final class LockedPictureComposer: Sendable {
    private let composer: Mutex<PictureComposer>

    /// Makes the composer (see `PictureComposer.init(options:)` for what throws).
    public init(options: PictureOptions) throws(PictureError) {
        composer = Mutex(try PictureComposer(options: options))
    }

    /// `PictureComposer.prepare(capture:index:count:)` under the lock.
    public func prepare(capture: [UInt8], index: Int, count: Int) {
        composer.withLock { $0.prepare(capture: capture, index: index, count: count) }
    }

    /// `PictureComposer.compose(captures:takenAt:)` under the lock; throws its `PictureError`.
    public func composePicture(captures: [[UInt8]], takenAt: Date) throws -> [UInt8] {
        try composer.withLock { c throws(PictureError) in try c.compose(captures: captures, takenAt: takenAt) }
    }
}

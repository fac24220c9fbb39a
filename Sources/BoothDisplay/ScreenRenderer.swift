import BoothCore
import BoothQRCode
import BoothRaster

/// What the screens say (the `[text]` settings), in the event's language.
public struct ScreenTexts: Sendable, Equatable {
    public var idle: String
    public var preview: String
    public var faultCamera: String
    /// The camera fault whose reason starts with ``FaultKind/cameraRestingPrefix`` (its battery is empty).
    public var faultCameraResting: String
    public var faultButton: String
    public var faultStorage: String
    /// With the countdown of a multi-shot session; `{shot}` and `{shots}` are replaced.
    public var countdownShot: String
    /// Between shots; `{shot}` (the next shot) and `{shots}` are replaced.
    public var betweenShots: String
    /// Under the review's QR code (and the last picture's on the idle screen).
    public var scan: String
    /// Under the idle screen's `WIFI:` code.
    public var wifi: String
    /// On the review screen when the capture cannot be drawn.
    public var reviewNotShown: String

    public init(idle: String, preview: String, faultCamera: String, faultButton: String, faultStorage: String,
                countdownShot: String = "Photo {shot} of {shots}", betweenShots: String = "{shot} of {shots}",
                scan: String = "Scan to get your photo", wifi: String = "Join the booth's Wi-Fi",
                faultCameraResting: String = "The camera is resting — back soon",
                reviewNotShown: String = "Your photo cannot be shown here") {
        self.faultCameraResting = faultCameraResting
        self.reviewNotShown = reviewNotShown
        self.idle = idle
        self.scan = scan
        self.wifi = wifi
        self.preview = preview
        self.countdownShot = countdownShot
        self.betweenShots = betweenShots
        self.faultCamera = faultCamera
        self.faultButton = faultButton
        self.faultStorage = faultStorage
    }

    /// The texts of `settings.text`.
    public init(_ t: Settings.Texts) {
        self.init(idle: t.idle, preview: t.preview, faultCamera: t.faultCamera, faultButton: t.faultButton,
                  faultStorage: t.faultStorage, countdownShot: t.countdownShot, betweenShots: t.betweenShots, scan: t.scan,
                  wifi: t.wifi, faultCameraResting: t.faultCameraResting, reviewNotShown: t.reviewNotShown)
    }

    /// `template` with `{shot}` and `{shots}` replaced: `"{shot} of {shots}"`, 2, 4 → `"2 of 4"`.
    public static func shotText(_ template: String, shot: Int, of shots: Int) -> String {
        template.replacing("{shots}", with: String(shots))
            .replacing("{shot}", with: String(shot))
    }

    /// What a guest reads for a fault of `kind` whose reason (the operator's words) is `reason`.
    public func fault(_ kind: FaultKind, reason: String = "") -> String {
        switch kind {
        case .camera: reason.hasPrefix(FaultKind.cameraRestingPrefix) ? faultCameraResting : faultCamera
        case .button: faultButton
        case .storage: faultStorage
        }
    }
}

/// How the live view is drawn.
public struct LiveViewOptions: Sendable, Equatable {
    /// Clockwise turn of the camera's frames (`camera.rotation`).
    public var cameraRotation: Rotation
    public var scaling: Scaling
    /// Mirror the live view (never the capture).
    public var mirror: Bool

    public init(cameraRotation: Rotation = .r0, scaling: Scaling = .fit, mirror: Bool = true) {
        self.cameraRotation = cameraRotation
        self.scaling = scaling
        self.mirror = mirror
    }
}

/// Draws the booth's screens onto a canvas of any size (text sized relative to the shorter side):
/// idle (live view or dark, "Press the button" band, the notice above it), preview (live view,
/// prompt), countdown (live view, a large digit in the centre), capture (white flash), review (the
/// capture, whole, never mirrored, with the print status in the band when there is one), fault (the
/// reasons in guests' words). Text through FreeType
/// (``Font``), rasterized once per text and size. Not thread-safe: one per drawing thread.
public final class ScreenRenderer {
    public let font: Font
    public var texts: ScreenTexts
    private let scaler = PictureScaler()
    /// Background where there is no picture.
    public static let dark: UInt32 = 0x20_2020
    /// Background of the fault screen.
    public static let faultBackground: UInt32 = 0x3A_1010

    public init(font: Font, texts: ScreenTexts) {
        self.font = font
        self.texts = texts
    }

    /// Why the review's capture was not drawn, the last time a review was drawn (the decoder's error); nil when it
    /// was. The screen then shows `texts.reviewNotShown`; the display's owner logs this once per capture.
    public private(set) var reviewFailure: String?

    /// The TurboJPEG scale of the last JPEG drawn.
    public var lastDecodeScale: JPEGScaleName { JPEGScaleName(scaler.lastScale.denominator) }

    /// Where the countdown digit is drawn on a `size` canvas (centred square, 60% of the shorter side).
    public static func digitRegion(_ size: FrameSize) -> PixelRect {
        let side = min(size.width, size.height) * 6 / 10
        return PixelRect(x: (size.width - side) / 2, y: (size.height - side) / 2, width: side, height: side)
    }

    /// The band at the bottom that holds the idle and preview texts (16% of the shorter side).
    public static func bandRegion(_ size: FrameSize) -> PixelRect {
        let h = min(size.width, size.height) * 16 / 100
        return PixelRect(x: 0, y: size.height - h, width: size.width, height: h)
    }

    /// Where the review screen's status line is drawn: the band at the bottom (``bandRegion(_:)``).
    public static func statusRegion(_ size: FrameSize) -> PixelRect { bandRegion(size) }

    /// Draws `screen` over the canvas. `live` is the newest camera frame (nil when the stream is
    /// stopped); `capture` the capture's JPEG for `.review`; `status` the review screen's status
    /// line as the runtime worded it ("Printing…", "Out of paper — your photo is saved"; nil or
    /// empty: nothing), drawn in ``statusRegion(_:)``. A live frame that does not decode leaves a dark
    /// background; a capture that does not decode leaves `texts.reviewNotShown` on black, and its error in
    /// ``reviewFailure``: a screen is always drawn.
    ///
    /// `link` is a picture's URL, drawn as a QR code (``qrPanel(_:modules:)``, `texts.scan` under
    /// it) beside the review's picture, and on the idle screen (the last picture's, kept until the
    /// next session); `wifi` a `WIFI:` code drawn on the idle screen's left (`texts.wifi` under it).
    public func render(_ screen: Screen, live: Frame?, capture: [UInt8]?, status: String? = nil, link: String? = nil,
                       wifi: String? = nil, options: LiveViewOptions, into canvas: inout Canvas) {
        let size = canvas.size, s = min(size.width, size.height)
        let whole = PixelRect(x: 0, y: 0, width: size.width, height: size.height)
        func liveView() {
            guard let live else { canvas.fill(ScreenRenderer.dark); return }
            do {
                // A camera that turned its frames (``Frame/turned``) leaves the rest of camera.rotation to us.
                try scaler.draw(live, into: &canvas, area: whole, rotation: options.cameraRotation.remaining(after: live.turned),
                                scaling: options.scaling, mirror: options.mirror)
            } catch {
                canvas.fill(ScreenRenderer.dark)
            }
        }
        switch screen {
        case .idle(let notice):
            liveView()
            if let code = link.flatMap({ QRCode($0) }) {
                drawCode(code, in: ScreenRenderer.qrPanel(size, modules: code.size), text: texts.scan, into: &canvas)
            }
            if let code = wifi.flatMap({ QRCode($0) }) {
                let right = ScreenRenderer.qrPanel(size, modules: code.size)
                drawCode(code, in: PixelRect(x: size.width - right.x - right.width, y: right.y, width: right.width, height: right.height),
                         text: texts.wifi, into: &canvas)
            }
            band(texts.idle, in: &canvas)
            if let notice, !notice.isEmpty {
                let m = font.mask(notice, pixelHeight: s * 5 / 100, maxWidth: size.width * 9 / 10)
                let band = ScreenRenderer.bandRegion(size)
                let y = band.y - m.height - s / 40
                canvas.shade(PixelRect(x: 0, y: y - s / 80, width: size.width, height: m.height + s / 40), 0, alpha: 150)
                canvas.draw(m, x: (size.width - m.width) / 2, y: y, color: 0xFF_E080)
            }
        case .preview:
            liveView()
            band(texts.preview, in: &canvas)
        case let .countdown(remaining, shot, shots):
            liveView()
            let region = ScreenRenderer.digitRegion(size)
            let m = font.mask(String(remaining), pixelHeight: region.height)
            let x = (size.width - m.width) / 2, y = (size.height - m.height) / 2
            canvas.draw(m, x: x + s / 120, y: y + s / 120, color: 0, opacity: 170)
            canvas.draw(m, x: x, y: y, color: 0xFF_FFFF)
            if shots > 1 { band(ScreenTexts.shotText(texts.countdownShot, shot: shot, of: shots), in: &canvas) }
        case let .betweenShots(next, shots):
            liveView()
            band(ScreenTexts.shotText(texts.betweenShots, shot: next, of: shots), in: &canvas)
        case .capture:
            canvas.fill(0xFF_FFFF)
        case .review:
            canvas.fill(0)
            let code = link.flatMap { QRCode($0) }
            let panel = code.map { ScreenRenderer.qrPanel(size, modules: $0.size) }
            if let capture {
                // With a code, the picture keeps the part of the screen beside its panel.
                let area = panel.map { p in PixelRect(x: 0, y: 0, width: max(1, p.x - s / 30), height: size.height) } ?? whole
                do {
                    try scaler.draw(jpeg: capture, into: &canvas, area: area, scaling: .fit)
                    reviewFailure = nil
                } catch {
                    reviewFailure = "\(error)"
                    let m = font.mask(texts.reviewNotShown, pixelHeight: s * 7 / 100, maxWidth: area.width * 9 / 10)
                    canvas.draw(m, x: area.x + (area.width - m.width) / 2, y: (size.height - m.height) / 2, color: 0xFF_FFFF)
                }
            }
            if let code, let panel { drawCode(code, in: panel, text: texts.scan, into: &canvas) }
            if let status, !status.isEmpty { band(status, in: &canvas) }
        case .fault(let reasons):
            canvas.fill(ScreenRenderer.faultBackground)
            var lines: [String] = []
            for kind in reasons.keys.sorted() {
                let line = texts.fault(kind, reason: reasons[kind] ?? "")
                if !lines.contains(line) { lines.append(line) }
            }
            let m = font.mask(lines.joined(separator: "\n"), pixelHeight: s * 7 / 100, maxWidth: size.width * 9 / 10)
            canvas.draw(m, x: (size.width - m.width) / 2, y: (size.height - m.height) / 2, color: 0xFF_FFFF)
        }
    }

    /// Where the review's QR code goes: a white square on the right, vertically centred above the
    /// status band, its side a whole number of pixels per module (at least 4) with the 4-module quiet
    /// zone inside it, as large as 45% of the screen's height and 32% of its width allow.
    public static func qrPanel(_ size: FrameSize, modules: Int) -> PixelRect {
        let total = modules + 8
        let room = min(size.height * 45 / 100, size.width * 32 / 100)
        let scale = max(4, room / total)
        let side = total * scale
        let margin = max(0, min(size.width, size.height) / 30)
        let band = bandRegion(size)
        return PixelRect(x: max(0, size.width - side - margin), y: max(0, (band.y - side) / 2), width: side, height: side)
    }

    /// The code in `panel` (white, quiet zone included) and `text` under it, on a dark plate (the
    /// idle screen's live view behind it).
    private func drawCode(_ code: QRCode, in panel: PixelRect, text: String, into canvas: inout Canvas) {
        canvas.fill(panel, 0xFF_FFFF)
        let scale = panel.width / (code.size + 8)
        let x0 = panel.x + 4 * scale, y0 = panel.y + 4 * scale
        for y in 0..<code.size {
            var x = 0
            while x < code.size {
                guard code.isDark(x: x, y: y) else { x += 1; continue }
                var run = 1
                while x + run < code.size && code.isDark(x: x + run, y: y) { run += 1 }
                canvas.fill(PixelRect(x: x0 + x * scale, y: y0 + y * scale, width: run * scale, height: scale), 0)
                x += run
            }
        }
        let s = min(canvas.size.width, canvas.size.height)
        let m = font.mask(text, pixelHeight: s * 4 / 100, maxWidth: panel.width + panel.width / 4)
        // Centred under the panel, kept on the screen (a panel at the edge, words wider than it).
        let x = max(s / 60, min(canvas.size.width - m.width - s / 60, panel.x + (panel.width - m.width) / 2))
        let y = panel.y + panel.height + s / 60
        canvas.shade(PixelRect(x: x - s / 80, y: y - s / 120, width: m.width + s / 40, height: m.height + s / 60), 0, alpha: 150)
        canvas.draw(m, x: x, y: y, color: 0xFF_FFFF)
    }

    private func band(_ text: String, in canvas: inout Canvas) {
        let size = canvas.size, s = min(size.width, size.height)
        let region = ScreenRenderer.bandRegion(size)
        canvas.shade(region, 0, alpha: 160)
        let m = font.mask(text, pixelHeight: s * 8 / 100, maxWidth: size.width * 9 / 10)
        canvas.draw(m, x: (size.width - m.width) / 2, y: region.y + (region.height - m.height) / 2, color: 0xFF_FFFF)
    }
}

/// `"1/2"`: a TurboJPEG decode scale, for logs and the bench.
public struct JPEGScaleName: Sendable, Equatable, CustomStringConvertible {
    public var denominator: Int
    init(_ d: Int) { denominator = d }
    public var description: String { "1/\(denominator)" }
}

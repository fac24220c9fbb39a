// BoothBench large-still-rss: the resident memory a 45 to 102 MP still adds at each step of a session.
import BoothCore
import BoothDisplay
import BoothJPEG
import BoothLayout
import BoothRaster
import Foundation

/// `BoothBench large-still-rss --megapixels N CAPTURE`: the resident memory each step of a session adds for a still
/// of N MP (CAPTURE upscaled, 4:2:0), over what the process held before the step (`VmHWM`, reset between steps by
/// writing 5 to /proc/self/clear_refs): the quarter turn of a portrait still (`JPEGRotator.rotate`, `tjTransform`
/// when the size allows, else decoded and encoded again), a 2-shot picture of it at the default 4x6 in and 300 dpi,
/// and its review on a 1920x1080 screen.
func largeStillRSS(megapixels: Double, path: String) throws {
    let file = "/tmp/photobooth-bench-large-\(getpid()).jpg"
    defer { unlink(file) }
    let size = try upscaleJPEG(from: path, to: file, megapixels: megapixels)
    let jpeg = try readFile(file)
    func step(_ name: String, _ body: () throws -> String) rethrows {
        _ = try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let before = vmRSSKilobytes()
        let what = try body()
        let peak = vmHWMKilobytes()
        print("\(size) \(name)\(what): peak \(peak / 1024) MB, \((peak - before) / 1024) MB over the \(before / 1024) MB before")
    }
    var turned: [UInt8] = []
    try step("quarter turn") {
        let r = try JPEGRotator().rotate(jpeg, by: .r90, quality: 92)
        turned = r.bytes
        return " (\(r.method.rawValue))"
    }
    try step("2-shot picture") {
        _ = try PictureComposer(options: PictureOptions()).compose(captures: [turned, turned], takenAt: Date())
        return ""
    }
    try step("review on 1920x1080") {
        let renderer = ScreenRenderer(font: try Font(path: Settings.defaults.display.font), texts: ScreenTexts(Settings.defaults.text))
        var canvas = Canvas(size: FrameSize(width: 1920, height: 1080))
        renderer.render(.review(pictureID: 1), live: nil, capture: turned, options: LiveViewOptions(), into: &canvas)
        return renderer.reviewFailure.map { " (not drawn: \($0))" } ?? " (decoded at \(renderer.lastDecodeScale))"
    }
}

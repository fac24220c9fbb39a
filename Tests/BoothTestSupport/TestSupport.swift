import BoothCore
import Foundation

/// The shared real photos the tests use: `$PHOTOBOOTH_SHARED_IMAGES` if set, else
/// `<package root>/../shared/images` (Debian's lomiri-wallpapers-16.04 photos; see README "Testing").
public enum SharedImages {
    /// The folder holding `captures/` and `photos/`.
    public static var directory: URL {
        if let path = ProcessInfo.processInfo.environment["PHOTOBOOTH_SHARED_IMAGES"] {
            return URL(fileURLWithPath: path)
        }
        let packageRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent("../shared/images").standardizedFileURL
    }

    /// `directory/captures`: 1280x720 and 1920x1080 camera-sized JPEGs.
    public static var capturesDirectory: URL { directory.appendingPathComponent("captures") }

    /// The captures whose file name ends in `suffix` (`.jpg`: all of them), sorted; empty when missing.
    public static func captures(endingIn suffix: String = ".jpg") -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: capturesDirectory.path)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { capturesDirectory.appendingPathComponent($0) }
    }

    /// The four 1920x1080 captures, sorted; empty when missing.
    public static func captures1080() -> [URL] { captures(endingIn: "_1920x1080.jpg") }

    /// A file's bytes. - Throws: Foundation's read error.
    public static func bytes(_ url: URL) throws -> [UInt8] { [UInt8](try Data(contentsOf: url)) }

    /// Why a test that needs the captures is skipped.
    public static func missingMessage(_ what: String = ".jpg") -> String {
        "no real captures: \(capturesDirectory.path) is missing or has no *\(what) "
            + "(set PHOTOBOOTH_SHARED_IMAGES to the shared images folder, or see README \"Testing\")"
    }
}

/// Settings for fast runtime tests: the simulated camera at 320x240 YUYV 30 fps, no preview phase,
/// no countdown, `reviewMilliseconds` of review, photos in `dir/photos` (the session-number record
/// `dir/session-number`), no file preview. Fields
/// are set directly, bypassing the file validation (a review under 1 s is not a valid setting).
public func fastSettings(dir: String, reviewMilliseconds: Int = 100) -> Settings {
    var s = Settings.defaults
    s.camera.device = "sim"
    s.camera.format = .yuyv
    s.camera.previewSize = FrameSize(width: 320, height: 240)
    s.camera.captureSize = FrameSize(width: 320, height: 240)
    s.camera.frameRate = 30
    s.camera.settleFrames = 0
    s.camera.captureTimeoutMilliseconds = 3000
    s.camera.idleStopMilliseconds = 600_000
    s.session.previewMilliseconds = 0
    s.session.previewTimeoutMilliseconds = 600_000
    s.session.countdownMilliseconds = 0
    s.session.reviewMilliseconds = reviewMilliseconds
    s.storage.dir = "\(dir)/photos"
    s.storage.sessionFile = "\(dir)/session-number"
    s.storage.minFreeBytes = 0
    s.preview.file = ""
    s.preview.frameRate = 10
    s.preview.size = FrameSize(width: 320, height: 200)
    return s
}

import BoothCore
import Foundation
import Synchronization

/// libgphoto2's virtual camera for the gphoto2 tests: Debian 12's PTP driver (the system libgphoto2's
/// ptp2.so) talking to the virtual USB port of a libgphoto2 2.5.31 build with hardware/gphoto2/vcamera.patch
/// (hardware/gphoto2/setup; install.sh --test runs it first). A "Nikon DSC D750" whose card holds the
/// shared real photos (one more stored turned, EXIF Orientation 6), whose live view serves the shared
/// camera-sized captures, and whose faults come from a control file.
///
/// The folders, the control file and libgphoto2's environment (`IOLIBS`, `CAMLIBS`, `VCAMERADIR`,
/// `VCAMERA_LIVEVIEWDIR`, `VCAMERA_CONTROL`) are made once per test process: the virtual camera reads its
/// card once per process and keeps its state in C statics, so only one test uses it at a time
/// (``exclusively(_:)``), whatever its suite.
public final class VirtualCamera: Sendable {
    public static let shared = Result { try VirtualCamera() }
    /// The card's photo stored turned (EXIF Orientation 6), beside the originals.
    public static let turnedPhoto = "TURNED_6.JPG"

    public let card: URL
    public let liveView: URL
    public let control: URL
    /// The original photos on the card (file names), sorted; with ``turnedPhoto`` the card's JPEG files.
    public let photoNames: [String]
    /// The camera drivers' folder in use: the system's (`/usr/lib/…/libgphoto2/2.5.30`) when it has ptp2.so.
    public let camlibs: String
    private static let busy = Mutex(false)

    public struct Missing: Error, CustomStringConvertible {
        public var description: String
    }

    private init() throws {
        let env = ProcessInfo.processInfo.environment
        let build = env["PHOTOBOOTH_GPHOTO2_VCAMERA"] ?? "/var/cache/photobooth-ci/gphoto2/current"
        let vusb = "\(build)/iolibs/vusb.so"
        guard FileManager.default.fileExists(atPath: vusb) else {
            throw Missing(description: "missing prerequisite: libgphoto2's virtual camera (\(vusb)): run hardware/gphoto2/setup (install.sh --test does)")
        }
        let system = ((try? String(contentsOfFile: "\(build)/system-camlibs", encoding: .utf8)) ?? "").trimmingWhitespace()
        camlibs = FileManager.default.fileExists(atPath: "\(system)/ptp2.so") ? system : "\(build)/camlibs"
        let photos = SharedImages.directory.appendingPathComponent("photos")
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: photos.path)) ?? []).filter { $0.hasSuffix(".jpg") }.sorted()
        let frames = SharedImages.captures(endingIn: "_1280x720.jpg")
        guard names.count >= 4, frames.count >= 2 else {
            throw Missing(description: "missing prerequisite: \(SharedImages.missingMessage())")
        }
        photoNames = names
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("vcamera-\(getpid())")
        card = root.appendingPathComponent("card")
        liveView = root.appendingPathComponent("liveview")
        control = root.appendingPathComponent("control")
        try? FileManager.default.removeItem(at: root)
        try FileManager.default.createDirectory(at: card, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: liveView, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: control.path, contents: Data())
        for name in names {
            try FileManager.default.createSymbolicLink(at: card.appendingPathComponent(name), withDestinationURL: photos.appendingPathComponent(name))
        }
        let turned = try SharedImages.bytes(photos.appendingPathComponent(names[0]))
        try Data(EXIFFixture.inserting(EXIFFixture.app1(orientation: 6), into: turned)).write(to: card.appendingPathComponent(Self.turnedPhoto))
        for f in frames {
            try FileManager.default.createSymbolicLink(at: liveView.appendingPathComponent(f.lastPathComponent), withDestinationURL: f)
        }
        setenv("IOLIBS", "\(build)/iolibs", 1)
        setenv("CAMLIBS", camlibs, 1)
        setenv("VCAMERADIR", card.path, 1)
        setenv("VCAMERA_LIVEVIEWDIR", liveView.path, 1)
        setenv("VCAMERA_CONTROL", control.path, 1)
    }

    /// Writes the control file's words (see hardware/gphoto2/vcamera.patch); none: a healthy camera.
    public func say(_ words: String...) throws {
        // Atomically (a temp file renamed over it): the camera reads the file at each operation, and a
        // truncated-then-written file read in between says nothing, a healthy camera for one frame.
        try Data(words.map { $0 + "\n" }.joined().utf8).write(to: control, options: .atomic)
    }

    /// The number of JPEG files on the card (the photos a capture serves in turn).
    public var photoCount: Int { photoNames.count + 1 }

    /// Runs `body` while no other test uses the virtual camera (a healthy one at the start).
    public func exclusively<T>(_ body: () throws -> T) throws -> T {
        while !Self.busy.withLock({ b in defer { b = true }; return !b }) { usleep(20_000) }
        defer { Self.busy.withLock { $0 = false } }
        try say()
        return try body()
    }

    /// ``exclusively(_:)`` for an async test.
    public func exclusively<T>(_ body: () async throws -> T) async throws -> T {
        while !Self.busy.withLock({ b in defer { b = true }; return !b }) { try await Task.sleep(for: .milliseconds(20)) }
        defer { Self.busy.withLock { $0 = false } }
        try say()
        return try await body()
    }
}

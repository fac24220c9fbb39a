import BoothCamera
import BoothCore
import BoothDisplay
import BoothOrientation
import BoothPorts
import BoothSystem
import BoothTestSupport
import BoothJPEG
import Synchronization
import Testing
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

@Suite("File preview framebuffer")
struct FilePreviewTests {
    /// A 64x16 XRGB8888 frame: the left half red, the right half blue.
    static let size = FrameSize(width: 64, height: 16)
    static func halves() -> [UInt32] {
        (0..<size.area).map { ($0 % size.width) < size.width / 2 ? 0x00FF_0000 : 0x0000_00FF }
    }

    /// Mean red and blue of the decoded file's left quarter (away from the JPEG's colour bleed at the seam).
    static func leftQuarter(_ path: String) throws -> (red: Int, blue: Int) {
        let image = try JPEGDecoder().decodeRGB(try AtomicFile.read(path))
        #expect(image.size == size)
        var red = 0, blue = 0, n = 0
        for y in 0..<size.height {
            for x in 0..<(size.width / 4) {
                let i = (y * size.width + x) * 3
                red += Int(image.bytes[i]); blue += Int(image.bytes[i + 2]); n += 1
            }
        }
        return (red / n, blue / n)
    }

    @Test("present writes the frame as it is; presentMirrored writes each row reversed (the live view's mirror)")
    func mirroredPresent() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let path = "\(dir)/preview.jpg"
        let framebuffer = JPEGFileFramebuffer(path: path, size: Self.size, quality: 90, log: Logger(threshold: .error) { _ in })
        let frame = Self.halves()

        frame.withUnsafeBytes { framebuffer.present($0) }
        let straight = try Self.leftQuarter(path)
        #expect(straight.red > 200 && straight.blue < 50, "left stays red: \(straight)")

        frame.withUnsafeBytes { framebuffer.presentMirrored($0) }
        let mirrored = try Self.leftQuarter(path)
        #expect(mirrored.blue > 200 && mirrored.red < 50, "the right half's blue is now on the left: \(mirrored)")
        #expect(framebuffer.written == 2)

        // A short frame is ignored, the file is left as it was.
        Array(frame.prefix(10)).withUnsafeBytes { framebuffer.presentMirrored($0) }
        #expect(framebuffer.written == 2)
    }

    @Test("the runtime makes one orientation source and hands that one to the camera and every screen")
    func oneOrientationSourceForCameraAndScreens() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let made = Mutex<[ObjectIdentifier]>([]), given = Mutex<[ObjectIdentifier]>([])
        let factory = DeviceFactory(
            camera: { _ in SimulatedCamera() }, button: { _ in NoButton() }, led: { _ in nil },
            screens: { _, _, _, turns in
                given.withLock { $0.append(ObjectIdentifier(turns)) }
                return []
            },
            orientation: { s in
                let source = OrientationTracker(settings: s)
                made.withLock { $0.append(ObjectIdentifier(source)) }
                return source
            })
        var auto = fastSettings(dir: dir)
        auto.camera.rotation = .auto
        auto.display.rotation = .auto
        let settings = auto
        let runtime = BoothRuntime(settings: settings, options: RuntimeOptions(), factory: factory,
                                   log: LogRecorder().logger(), reloader: { .success(settings) })
        let sources = made.withLock { $0 }
        #expect(sources.count == 1, "one source, not one per user")
        #expect(given.withLock { $0 } == sources, "the screens got that source")
        #expect([ObjectIdentifier(runtime.orientation)] == sources, "the camera's turn comes from it too")
    }
}

import BoothClock
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

// `photoboothd --check` must not change the system: the storage check reports, it creates nothing.
@Suite struct CheckStorageTests {
    @Test func missingDirectoryIsReportedAsCreatableNotCreated() {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let photos = "\(dir)/card/photos"
        let result = checkStorage(directory: photos)
        #expect(result.ok)
        #expect(result.report.contains("will create \(dir)/card, \(photos)"), "\(result.report)")
        #expect(result.report.contains("\(dir) is writable"))
        #expect(listDirectory(dir).isEmpty, "nothing created")
    }

    @Test func existingDirectoryIsCheckedWithoutProbeOrCleanup() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let leftover = "\(AtomicFile.tempPrefix)booth-000001-1.jpg.7"
        try AtomicFile.write([1], to: "\(dir)/\(leftover)", durable: false, replace: true)
        let result = checkStorage(directory: dir)
        #expect(result.ok)
        #expect(result.report.hasPrefix("storage \(dir) (") && result.report.hasSuffix(" free)"), "\(result.report)")
        #expect(listDirectory(dir) == [leftover], "a leftover temp file is the daemon's to remove, not the check's")
    }

    @Test func parentThatIsAFileIsAProblem() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write([1], to: "\(dir)/file", replace: true)
        let result = checkStorage(directory: "\(dir)/file/photos")
        #expect(!result.ok)
        #expect(result.report.contains("cannot be created") && result.report.contains("\(dir)/file is not a directory"))
        let notDir = checkStorage(directory: "\(dir)/file")
        #expect(!notDir.ok)
        #expect(notDir.report.contains("is not a directory"))
    }

    @Test("a dangling symbolic link is no directory the daemon could create; a trailing slash is one directory")
    func danglingLinkAndTrailingSlash() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        #expect(symlink("\(dir)/gone", "\(dir)/photos") == 0)
        let linked = checkStorage(directory: "\(dir)/photos")
        #expect(!linked.ok)
        #expect(linked.report.contains("symbolic link to a missing target"), "\(linked.report)")
        let slash = checkStorage(directory: "\(dir)/new/")
        #expect(slash.ok)
        #expect(slash.report.contains("will create \(dir)/new ("), "\(slash.report)")
        #expect(listDirectory(dir) == ["photos"], "nothing created")
    }

    @Test func checkDevicesLeavesAMissingPhotosDirectoryMissing() {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let settings = fastSettings(dir: dir)
        let camera = TestCamera(name: "sim-check"), button = FakeButton(), logs = LogRecorder()
        let factory = DeviceFactory(camera: { _ in camera }, button: { _ in button }, led: { _ in nil },
                                    displays: { _, _, _ in [] })
        let code = checkDevices(settings: settings, factory: factory, log: logs.logger())
        #expect(code == ExitCode.ok, "\(logs.all)")
        #expect(access(settings.storage.dir, F_OK) != 0, "--check created \(settings.storage.dir)")
        #expect(logs.all.contains { $0.contains("check: ok: storage \(settings.storage.dir) does not exist yet") })
    }

    @Test("--check says what a power cut does to a storage.dir in memory (tmpfs), and nothing for the test's own disk")
    func checkNotesTheFileSystem() throws {
        guard FileSystemKind.of("/dev/shm") == .memory("tmpfs") else {
            Issue.record("missing prerequisite: /dev/shm is not a tmpfs here (\(String(describing: FileSystemKind.of("/dev/shm"))))")
            return
        }
        let dir = "/dev/shm/photobooth-check-\(getpid())"
        defer { removeTree(dir) }
        var settings = fastSettings(dir: makeTempDir())
        settings.storage.dir = dir
        let camera = TestCamera(name: "sim-check"), button = FakeButton(), logs = LogRecorder()
        let factory = DeviceFactory(camera: { _ in camera }, button: { _ in button }, led: { _ in nil },
                                    displays: { _, _, _ in [] })
        #expect(checkDevices(settings: settings, factory: factory, log: logs.logger()) == ExitCode.ok, "\(logs.all)")
        #expect(logs.all.contains { $0.contains("check: storage.dir \(dir) is on tmpfs, in memory: its photos are lost at a power cut") })
        let onDisk = LogRecorder()
        let plain = fastSettings(dir: makeTempDir())
        _ = checkDevices(settings: plain, factory: factory, log: onDisk.logger())
        if FileSystemKind.of(plain.storage.dir)?.powerCutNote(dir: plain.storage.dir) == nil {
            #expect(!onDisk.all.contains { $0.contains("power cut") })
        }
    }
}

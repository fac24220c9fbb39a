import BoothCore
import Foundation
import Glibc
import Testing
@testable import BoothCamera

/// A temporary directory standing in for /dev.
private final class FakeDevRoot {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "booth-dev-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String) throws {
        try Data().write(to: URL(fileURLWithPath: "\(path)/\(name)"))
    }
    func byId(_ name: String, to destination: String) throws {
        let dir = "\(path)/v4l/by-id"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/\(name)", withDestinationPath: destination)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

private func camera(_ path: String, card: String, usable: Bool = true, byId: [String] = []) -> CameraInfo {
    CameraInfo(path: path, byIdNames: byId, driver: "uvcvideo", card: card, isUsableCapture: usable)
}

@Suite struct SelectorTests {
    @Test(arguments: [
        ("", CameraSelector.auto), ("auto", .auto), ("  AUTO ", .auto),
        ("/dev/video2", .path("/dev/video2")),
        ("/dev/v4l/by-id/usb-Logitech_C920-video-index0", .path("/dev/v4l/by-id/usb-Logitech_C920-video-index0")),
        ("usb-Logitech_C920-video-index0", .name("usb-Logitech_C920-video-index0")),
        ("C920", .name("C920")),
    ])
    func parsing(text: String, expected: CameraSelector) {
        #expect(CameraSelector(parsing: text) == expected)
    }

    let cameras = [
        camera("/dev/video0", card: "Integrated Camera: metadata", usable: false),
        camera("/dev/video1", card: "Integrated Camera", byId: ["usb-Chicony_Integrated_Camera-video-index0"]),
        camera("/dev/video2", card: "HD Pro Webcam C920", byId: ["usb-046d_HD_Pro_Webcam_C920_ABC-video-index0"]),
    ]

    @Test func autoPicksFirstUsableCapture() {
        #expect(CameraSelector.auto.select(from: cameras)?.path == "/dev/video1")
    }

    @Test func nameMatchesByIdThenCardSubstring() {
        #expect(CameraSelector.name("usb-046d_HD_Pro_Webcam_C920_ABC-video-index0").select(from: cameras)?.path == "/dev/video2")
        #expect(CameraSelector.name("c920").select(from: cameras)?.path == "/dev/video2")
        #expect(CameraSelector.name("integrated").select(from: cameras)?.path == "/dev/video1")  // not the metadata node
        #expect(CameraSelector.name("Brio").select(from: cameras) == nil)
    }

    @Test func pathMatchesNodeOrResolvedLink() {
        #expect(CameraSelector.path("/dev/video2").select(from: cameras)?.card == "HD Pro Webcam C920")
        #expect(CameraSelector.path("/dev/v4l/by-id/x").select(from: cameras, resolvedPath: "/dev/video1")?.path == "/dev/video1")
        #expect(CameraSelector.path("/dev/video9").select(from: cameras) == nil)
    }
}

@Suite struct DiscoveryTests {
    @Test func emptyDevRootFindsNothing() throws {
        let root = try FakeDevRoot()
        let discovery = CameraDiscovery(devRoot: root.path)
        #expect(discovery.videoNodePaths().isEmpty)
        #expect(discovery.cameras(detail: .full).isEmpty)
        #expect(discovery.byIdLinks().isEmpty)
    }

    @Test func missingDevRootFindsNothing() {
        #expect(CameraDiscovery(devRoot: "/nonexistent-booth-dev").cameras().isEmpty)
    }

    @Test func nodesSortNumericallyAndNonDevicesReportTheirProblem() throws {
        let root = try FakeDevRoot()
        for name in ["video10", "video2", "video0", "videoX", "vbi0"] { try root.file(name) }
        let discovery = CameraDiscovery(devRoot: root.path)
        #expect(discovery.videoNodePaths() == ["video0", "video2", "video10"].map { "\(root.path)/\($0)" })
        let found = discovery.cameras()
        #expect(found.count == 3)
        // Regular files are not V4L2 devices: QUERYCAP fails with ENOTTY.
        #expect(found.allSatisfy { !$0.isUsableCapture && ($0.problem?.contains("VIDIOC_QUERYCAP") ?? false) })
        #expect(discovery.captureCameras().isEmpty)
    }

    @Test func byIdLinksResolveToNodes() throws {
        let root = try FakeDevRoot()
        try root.file("video2")
        try root.byId("usb-Cam_1234-video-index0", to: "../../video2")
        let discovery = CameraDiscovery(devRoot: root.path)
        let links = discovery.byIdLinks()
        #expect(links.count == 1)
        #expect(links.first?.name == "usb-Cam_1234-video-index0")
        #expect(links.first?.target == "\(root.path)/video2")
        #expect(discovery.cameras().first?.byIdNames == ["usb-Cam_1234-video-index0"])
        // A configured by-id path resolves to the node, re-resolved on every call.
        let path = try V4L2Camera.resolve(.path("\(root.path)/v4l/by-id/usb-Cam_1234-video-index0"), discovery: discovery)
        #expect(path == "\(root.path)/video2")
    }

    @Test func autoWithNoCameraThrowsNamingTheSelector() throws {
        let root = try FakeDevRoot()
        let discovery = CameraDiscovery(devRoot: root.path)
        #expect {
            _ = try V4L2Camera.resolve(.name("C920"), discovery: discovery)
        } throws: { error in
            guard let e = error as? V4L2Error else { return false }
            return e.call == "select camera" && e.errno == ENODEV && e.device == "C920" && e.isDisconnect
        }
    }
}

import BoothCore
import BoothSystem
import Foundation
import Glibc
import Testing
@testable import BoothCamera

@Suite struct V4L2CameraTests {
    @Test func missingPathThrowsErrorNamingCallErrnoAndDevice() {
        let camera = V4L2Camera()
        let path = "/dev/booth-no-such-video-node"
        #expect {
            _ = try camera.start(StreamRequest(device: path))
        } throws: { error in
            guard let e = error as? V4L2Error else { return false }
            return e.failure == SystemCallError(call: "open", errno: ENOENT, subject: path) && e.detail == nil
                && e.call == "open" && e.errno == ENOENT && e.device == path && e.isDisconnect
                && e.description.contains("open on") && e.description.contains(path)
                && e.description.contains("errno \(ENOENT)")
        }
        camera.stop()
        camera.stop()
    }

    @Test func regularFileIsNotACamera() throws {
        let path = NSTemporaryDirectory() + "booth-not-a-camera-\(UUID().uuidString)"
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let camera = V4L2Camera()
        #expect {
            _ = try camera.start(StreamRequest(device: path))
        } throws: { error in
            guard let e = error as? V4L2Error else { return false }
            return e.call == "VIDIOC_QUERYCAP" && e.errno == ENOTTY && e.device == path && !e.isDisconnect
        }
    }

    @Test func nextFrameBeforeStartThrows() {
        let camera = V4L2Camera()
        #expect(throws: V4L2Error.self) { _ = try camera.nextFrame(timeoutMilliseconds: 10) }
        #expect(throws: V4L2Error.self) { _ = try camera.reconfigure(size: FrameSize(width: 640, height: 480)) }
    }

    @Test func disconnectErrnos() {
        #expect(V4L2Error(call: "VIDIOC_DQBUF", errno: ENODEV, device: "/dev/video0").isDisconnect)
        #expect(V4L2Error(call: "poll", errno: EIO, device: "/dev/video0").isDisconnect)
        #expect(V4L2Error(call: "VIDIOC_QBUF", errno: ENXIO, device: "/dev/video0").isDisconnect)
        #expect(!V4L2Error(call: "VIDIOC_S_FMT", errno: EINVAL, device: "/dev/video0").isDisconnect)
        #expect(!V4L2Error(call: "VIDIOC_S_FMT", errno: EBUSY, device: "/dev/video0").isDisconnect)
        #expect(V4L2Error(call: "VIDIOC_S_FMT", errno: EINVAL, device: "/dev/video0").description
                == "VIDIOC_S_FMT on /dev/video0 failed: Invalid argument (errno 22, EINVAL)")
        // The ioctl's failure is BoothSystem's SystemCallError; V4L2's detail comes after its words.
        #expect(V4L2Error(call: "VIDIOC_REQBUFS", errno: ENOMEM, device: "/dev/video0", detail: "the driver granted 1 buffers, at least 2 are needed").failure
                == SystemCallError(call: "VIDIOC_REQBUFS", errno: ENOMEM, subject: "/dev/video0"))
        #expect(V4L2Error(call: "VIDIOC_DQBUF", errno: EBADF, device: "/dev/video0", detail: "stream not started").description
                == "VIDIOC_DQBUF on /dev/video0 failed: Bad file descriptor (errno 9, EBADF): stream not started")
    }

    static let realCameras = CameraDiscovery().captureCameras()

    @Test(.enabled(if: !realCameras.isEmpty,
                   "no V4L2 capture device under /dev/video* on this machine; the qemu guest (vivid) runs this test"))
    func streamsFramesFromARealCamera() throws {
        let camera = V4L2Camera()
        let info = try camera.start(StreamRequest(device: "auto", format: .auto, size: FrameSize(width: 640, height: 480),
                                                  framesPerSecond: 30, settleFrames: 2))
        defer { camera.stop() }
        var frames: [Frame] = []
        for _ in 0..<40 where frames.count < 5 {
            if let frame = try camera.nextFrame(timeoutMilliseconds: 2000) { frames.append(frame) }
        }
        #expect(frames.count == 5, "got \(frames.count) frames from \(camera.identity)")
        for f in frames {
            #expect(f.format == info.format && f.size == info.size)
            #expect(FrameCheck.defect(of: f.bytes, format: f.format) == nil)
            if f.format != .mjpeg { #expect(f.bytes.count >= f.bytesPerLine * f.size.height) }
        }
        #expect(zip(frames, frames.dropFirst()).allSatisfy { $0.sequence < $1.sequence && $0.timestamp < $1.timestamp })
        #expect(camera.statistics.framesDelivered == 5)
        #expect(camera.statistics.framesSettling == 2)
        let switched = try camera.reconfigure(size: FrameSize(width: 320, height: 240))
        #expect(switched.size.area <= info.size.area)
        var after: Frame? = nil
        for _ in 0..<20 where after == nil { after = try camera.nextFrame(timeoutMilliseconds: 2000) }
        #expect(after?.size == switched.size)
        camera.stop()
        camera.stop()
    }
}

@Suite struct CaptureInstantTests {
    private func at(_ ms: UInt64) -> MonotonicInstant { MonotonicInstant(nanoseconds: ms * 1_000_000) }

    @Test func flaggedMonotonicTimestampIsTheCaptureInstant() {
        #expect(V4L2Camera.captureInstant(monotonic: at(900), raw: at(900), typeUnknown: false, dequeuedAt: at(5000)) == at(900))
    }

    /// v4l2loopback 0.12.7: CLOCK_MONOTONIC values with the type bits UNKNOWN.
    @Test func unknownTypeOnTheMonotonicClockCounts() {
        #expect(V4L2Camera.captureInstant(monotonic: nil, raw: at(34_972), typeUnknown: true, dequeuedAt: at(34_977)) == at(34_972))
    }

    @Test func unknownTypeFarFromTheMonotonicClockDoesNot() {
        // a realtime (wall clock) stamp, decades away from the monotonic clock
        let wall = MonotonicInstant(nanoseconds: 1_764_000_000 * 1_000_000_000)
        #expect(V4L2Camera.captureInstant(monotonic: nil, raw: wall, typeUnknown: true, dequeuedAt: at(34_977)) == nil)
        // older than the window, or after the dequeue: not trusted either
        #expect(V4L2Camera.captureInstant(monotonic: nil, raw: at(30_000), typeUnknown: true, dequeuedAt: at(34_977)) == nil)
        #expect(V4L2Camera.captureInstant(monotonic: nil, raw: at(34_978), typeUnknown: true, dequeuedAt: at(34_977)) == nil)
        // the COPY type (timestamps copied from an output queue) is not the capture instant
        #expect(V4L2Camera.captureInstant(monotonic: nil, raw: at(34_972), typeUnknown: false, dequeuedAt: at(34_977)) == nil)
    }
}

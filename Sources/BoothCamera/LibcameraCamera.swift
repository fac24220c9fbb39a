import BoothCore
import BoothPorts
import CLibcameraShim
import CYUV
import Glibc

/// A camera driven through libcamera (a Raspberry Pi camera module behind its ISP; vimc in the tests),
/// streaming one stream (the viewfinder role for live view; a still at another size switches the
/// stream and back, ``reconfigure(size:)``). Conforms to ``CameraDevice``, so ``StreamingCameraSource``
/// gives it the live view, the first frame at or after the trigger, faults and recovery as for V4L2.
///
/// Frames: NV12/YUV420/YUYV become YUYV frames (libyuv, one pass from the mapped buffer; NV12's chroma
/// split first), BGR888/RGB888 RGB24 frames (a row copy, or libyuv `RAWToRGB24` to swap R and B).
/// Timestamps are libcamera's `FrameMetadata::timestamp` (`CLOCK_MONOTONIC`, the start of exposure).
///
/// Confined to the thread that streams it (see ``CameraDevice``); `nextFrame` blocks it in
/// `pb_lc_camera_wait_frame` (a condition variable libcamera's own thread signals).
public final class LibcameraCamera: CameraDevice, @unchecked Sendable {
    // @unchecked Sendable: confined to one thread as CameraDevice requires; the C handles are not shared.
    private var manager: OpaquePointer?
    private var camera: OpaquePointer?
    private var request = StreamRequest()
    private var stream: (format: LibcameraFormat, size: FrameSize, stride: Int)?
    /// The still stream beside the viewfinder, when the pipeline gives two.
    private var still: (format: LibcameraFormat, size: FrameSize)?
    private var stats = CameraStatistics()
    private var lastSequence: UInt64?
    private var settleLeft = 0
    private var lockPending = false
    /// `camera.focus = locked` not yet locked in this open: AfMode manual once continuous autofocus reports
    /// Focused (or, without AfState, after the first frames; at the latest after ``focusFrameLimit``).
    private var focusLockPending = false
    private var framesSinceStart = 0
    private var rateWindow: [MonotonicInstant] = []
    private var chroma: [UInt8] = []
    private var stillChroma: [UInt8] = []
    private var knownControls: Set<CameraControlKind> = []
    /// An autofocus cycle triggered and not yet ended (controls::AfState Focused or Failed), with the
    /// frames seen since (a cycle that never ends is given up after ``focusFrameLimit``).
    private var focusPending: (frames: Int, scanned: Bool)?
    /// Requests the stream has in flight (its buffer count): frames completed before a control set now
    /// still carry the old state.
    private var bufferCount = 4
    /// Exposure / white balance locked (AeEnable / AwbEnable off) in this open: later streams start locked.
    private var exposureLocked = false
    private var whiteBalanceLocked = false
    /// Focus locked (AfMode manual: the lens stays) in this open, for `camera.focus = locked`.
    private var focusLocked = false
    /// The camera has controls::FrameDurationLimits (`camera.frame_rate` can be asked).
    private var hasFrameDurationLimits = false
    /// AeFlickerMode offers FlickerAuto (`camera.power_line_frequency = auto`).
    private var hasFlickerAuto = false
    private var notes: [String] = []
    /// The clockwise turn of the configuration's frames (`pb_lc_camera_turn`): 180° when the sensor's flips
    /// turn them for `camera.rotation` 180, else 0° (the booth turns them); set on every frame (``Frame/turned``).
    private var turned: Rotation = .r0
    /// Frames an autofocus cycle may take before it is noted as unfinished (about 3 s at 30 frames/s).
    static let focusFrameLimit = 90
    /// `"platform/vimc.0 Sensor B (Sensor B)"`: the camera's id and model once `start` chose it, for the log.
    public private(set) var identity = "libcamera"

    /// A camera not yet opened; `start` starts libcamera's `CameraManager` and acquires the camera.
    public init() {}

    deinit { stop() }

    public var statistics: CameraStatistics { stats }
    public var controls: Set<CameraControlKind> { knownControls }

    /// Opens the camera `request.device` names (``LibcameraCameraInfo/matches(_:)``; the first one for
    /// `auto`), configures a viewfinder stream at `request.size` in the first format of
    /// ``LibcameraFormat/preference`` it offers and starts it, auto exposure and white balance on.
    /// - Throws: ``LibcameraError`` with call `libcamera …`: `ENODEV` when no camera matches (``LibcameraError/isDisconnect``),
    ///   `EBUSY` when another process holds it, `EINVAL` when no format the booth reads is offered.
    public func start(_ request: StreamRequest) throws -> StreamInfo {
        stop()
        self.request = request
        var error: Int32 = 0
        guard let manager = pb_lc_manager_new(&error) else { throw libcameraError("CameraManager::start", error, device: "libcamera") }
        self.manager = manager
        let cameras = libcameraCameras(manager, details: false)
        // Empty or auto: the first camera that is not a UVC webcam (those stay on V4L2); a named one as named.
        let named = !request.device.trimmingSpaces().isEmpty && request.device.trimmingSpaces() != "auto"
        guard let (_, chosen, info) = cameras.first(where: { $0.info.matches(request.device) && (named || !$0.info.isUVC) }) else {
            stop()
            var listed = cameras.isEmpty ? "libcamera lists no camera" : "libcamera lists \(cameras.map { "'\($0.info.id)'" }.joined(separator: ", "))"
            // A pipeline another process streams from may not be listed at all (vimc's match sets up its
            // media links, which fails with EBUSY then): name who holds a media device.
            if let held = Self.mediaDeviceHolder() { listed += "; \(held.node) is in use by \(held.holder): stop it" }
            throw LibcameraError(call: "CameraManager::get", code: ENODEV, camera: request.device, detail: "no camera matches camera.device = '\(request.device)': \(listed)")
        }
        identity = chosen.model.isEmpty ? chosen.id : "\(chosen.id) (\(chosen.model))"
        guard let camera = pb_lc_camera_open(manager, chosen.id, &error) else {
            var e = libcameraError("Camera::acquire", error, device: chosen.id)
            if error == -EBUSY {
                var nodes = [CChar](repeating: 0, count: 512)
                _ = pb_lc_camera_video_nodes(manager, chosen.id, &nodes, nodes.count)
                let paths = String(nulTerminated: nodes).split(separator: "\n").map(String.init)
                let holder = Self.mediaDeviceHolder().map(\.holder) ?? paths.lazy.compactMap(DeviceNodeHolder.find).first
                e = LibcameraError(call: "Camera::acquire", code: EBUSY, camera: chosen.id,
                              detail: holder.map { "in use by \($0), which holds \(paths.joined(separator: ", ")): stop it (or set camera.device to another camera)" }
                                  ?? "another process holds it (libcamera locks its media device; no process found holding \(paths.isEmpty ? "its video nodes" : paths.joined(separator: ", ")): the service's sandbox hides other users' processes; 'sudo fuser -v /dev/media* \(paths.isEmpty ? "/dev/video*" : paths.joined(separator: " "))' names it, often rpicam-hello or another camera app)")
            }
            stop()
            throw e
        }
        self.camera = camera
        exposureLocked = false
        whiteBalanceLocked = false
        focusLocked = false
        hasFrameDurationLimits = info.has_frame_duration_limits != 0
        hasFlickerAuto = info.has_ae_flicker_auto != 0
        knownControls = []
        if info.has_ae != 0 { knownControls.insert(.exposure) }
        if info.has_awb != 0 { knownControls.insert(.whiteBalance) }
        if info.has_autofocus != 0 { knownControls.insert(.focus) }
        if info.has_ae_flicker != 0 { knownControls.insert(.powerLineFrequency) }
        return try configureAndStart(size: request.size, stillSize: request.stillSize, card: chosen.model.isEmpty ? chosen.id : chosen.model,
                                     device: chosen.id)
    }

    /// Configures the viewfinder stream at `size` and starts it. The preview's stream (`size` = the request's)
    /// runs continuous autofocus; a still's (another size) leaves AfMode as the countdown's cycle left it, so
    /// the focus found is kept. Exposure and white balance once locked stay locked across both.
    ///
    /// With `stillSize` (the stills' size, when it differs), a still stream is asked for beside the viewfinder
    /// (``pb_lc_camera_configure_pair``, the viewfinder and still roles, one format of ``LibcameraFormat/preference``
    /// for both); a pipeline that gives one stream (vimc, Debian 12's) answers ENOTSUP and the one stream is
    /// configured, stills then switching its size and back.
    private func configureAndStart(size: FrameSize, stillSize: FrameSize? = nil, card: String, device: String) throws -> StreamInfo {
        guard let camera else { throw LibcameraError(call: "Camera::configure", code: ENODEV, camera: device, detail: "not open") }
        var warnings: [String] = []
        var chosen: (LibcameraFormat, pb_lc_stream_config)?
        // camera.rotation 180: the sensor's flips turn the frames for free where the pipeline can (libcamera's
        // orientation); a quarter turn needs a transpose, which is ours.
        _ = pb_lc_camera_want_turn(camera, request.turn == .r180 ? 180 : 0)
        self.still = nil
        var oneStreamWhy: String?
        if let stillSize, stillSize != size {
            pair: for format in LibcameraFormat.preference {
                var viewfinder = pb_lc_stream_config(role: Int32(PB_LC_ROLE_VIEWFINDER), fourcc: format.rawValue,
                                                     width: UInt32(size.width), height: UInt32(size.height),
                                                     stride: 0, frame_size: 0, buffer_count: 0)
                var still = pb_lc_stream_config(role: Int32(PB_LC_ROLE_STILL), fourcc: format.rawValue,
                                                width: UInt32(stillSize.width), height: UInt32(stillSize.height),
                                                stride: 0, frame_size: 0, buffer_count: 0)
                let rc = pb_lc_camera_configure_pair(camera, &viewfinder, &still)
                switch rc {
                case -ENOTSUP:
                    oneStreamWhy = String(cString: pb_lc_last_error())
                    break pair
                case ..<0 where rc != -EINVAL:
                    throw libcameraError("Camera::configure", rc, device: device)
                case 0...:
                    guard viewfinder.fourcc == format.rawValue, let stillFormat = LibcameraFormat(rawValue: still.fourcc) else { continue }
                    chosen = (format, viewfinder)
                    self.still = (stillFormat, FrameSize(width: Int(still.width), height: Int(still.height)))
                    break pair
                default:
                    continue
                }
            }
        }
        for format in LibcameraFormat.preference where chosen == nil {
            var config = pb_lc_stream_config(role: Int32(PB_LC_ROLE_VIEWFINDER), fourcc: format.rawValue,
                                             width: UInt32(size.width), height: UInt32(size.height),
                                             stride: 0, frame_size: 0, buffer_count: 0)
            let rc = pb_lc_camera_configure(camera, &config)
            if rc >= 0, config.fourcc == format.rawValue { chosen = (format, config); break }
            // Anything but a refused configuration (the camera gone, busy) is the error itself, not a format problem.
            if rc < 0, rc != -EINVAL { throw libcameraError("Camera::configure", rc, device: device) }
        }
        guard let (format, config) = chosen else {
            throw LibcameraError(call: "Camera::configure", code: EINVAL, camera: device,
                            detail: "the camera offers none of \(LibcameraFormat.preference.map(\.name).joined(separator: ", ")) for a viewfinder stream")
        }
        let got = FrameSize(width: Int(config.width), height: Int(config.height))
        // A still's switch asks for the capture size: that setting is the one not offered then.
        if got != size { warnings.append("\(size == request.size ? "camera.preview_size" : "camera.capture_size") \(size) not offered: libcamera adjusted it to \(got)") }
        stream = (format, got, Int(config.stride))
        // The size the still's switch will give (libcamera adjusts a size its pipeline lacks: 4056x3040 to
        // 4056x2160 on vimc), as validated now, not the size asked.
        let oneStreamNote = oneStreamWhy.map { why in
            stillSize.map { "one stream (\(why)): a still switches it to \(offeredSize(nearestTo: $0) ?? $0) and back" } ?? "one stream (\(why))"
        }
        bufferCount = Int(config.buffer_count)
        var controls = startControls(forStill: size != request.size)
        let rc = pb_lc_camera_start(camera, &controls)
        if rc < 0, rc != -ENODEV, self.still != nil {
            // Two streams configured but not started (the still stream's full-size buffers may not fit the
            // memory a Pi sets aside for them): one stream works where two do not.
            let words = String(cString: pb_lc_last_error())
            var info = try configureAndStart(size: size, stillSize: nil, card: card, device: device)
            info.warnings.append("a still stream beside the viewfinder did not start (\(words)): stills switch the stream's size and back")
            return info
        }
        guard rc == 0 else { throw libcameraError("Camera::start", rc, device: device) }
        var degrees: Int32 = 0, mirrored: Int32 = 0
        _ = pb_lc_camera_turn(camera, &degrees, &mirrored)
        turned = Rotation(degrees: Int(degrees))
        if mirrored != 0 {
            warnings.append("libcamera delivers this camera's frames mirrored (its sensor's mounting, which its pipeline cannot undo); the booth does not unmirror them")
        }
        lastSequence = nil
        focusPending = nil
        settleLeft = request.settleFrames
        framesSinceStart = 0
        lockPending = (request.controls.exposure == .locked && !exposureLocked) || (request.controls.whiteBalance == .locked && !whiteBalanceLocked)
        focusLockPending = request.controls.focus == .locked && knownControls.contains(.focus) && !focusLocked
        stats = CameraStatistics()
        rateWindow = []
        var notes: [String] = []
        if let still { notes.append("still stream \(still.format.name) \(still.size) beside the viewfinder") }
        if let oneStreamNote { notes.append(oneStreamNote) }
        if turned != .r0 {
            notes.append(request.turn == turned ? "frames come turned \(turned) (libcamera orientation) as camera.rotation asks: no turn of ours"
                                                : "frames come turned \(turned) (libcamera orientation: the sensor's mounting, which its pipeline cannot undo); the booth turns them by the rest")
        } else if request.turn == .r180 {
            notes.append("camera.rotation 180°: this pipeline does not flip the sensor; the booth turns the frames")
        }
        if knownControls.contains(.exposure) { notes.append("AeEnable on\(request.controls.exposure == .locked ? ", locked after the first frames" : "")") }
        if knownControls.contains(.whiteBalance) { notes.append("AwbEnable on\(request.controls.whiteBalance == .locked ? ", locked after the first frames" : "")") }
        if knownControls.contains(.focus) {
            notes.append(request.controls.focus == .locked ? (focusLocked ? "AfMode manual (focus locked)" : "AfMode continuous, locked once focused")
                         : size != request.size ? "AfMode kept from the countdown's cycle" : "AfMode continuous")
        }
        if request.controls.powerLineFrequency != nil, !knownControls.contains(.powerLineFrequency) {
            notes.append("camera.power_line_frequency: this libcamera (\(libcameraVersion())) has no flicker control")
        } else if request.controls.powerLineFrequency == .auto, !hasFlickerAuto {
            notes.append("camera.power_line_frequency = auto: this camera's AeFlickerMode has no auto; left as it is")
        }
        notes.append(hasFrameDurationLimits ? "FrameDurationLimits \(frameDurationMicroseconds) µs (camera.frame_rate \(Int(request.framesPerSecond.rounded())))"
                                            : "camera.frame_rate: this camera has no FrameDurationLimits; it streams at its own rate")
        if request.format != .auto {
            notes.append("camera.format = \(request.format.rawValue) is for V4L2 cameras: libcamera streams the first of \(LibcameraFormat.preference.map(\.name).joined(separator: ", ")) its pipeline offers")
        }
        return StreamInfo(devicePath: device, card: card, format: format.frameFormat, size: got,
                          bytesPerLine: format.frameFormat == .yuyv ? got.width * 2 : got.width * 3,
                          frameInterval: nil, warnings: warnings, controlNotes: notes)
    }

    /// True when `camera.focus = locked` may lock now: continuous autofocus reports Focused (AfState 2), or
    /// the camera reports no AfState (-1) and the first frames (`settleFrames`, at least 10) are past, or
    /// ``focusFrameLimit`` frames are.
    static func focusSettled(afState: Int32, frames: Int, settleFrames: Int) -> Bool {
        afState == 2 || (afState < 0 && frames >= max(settleFrames, 10)) || frames >= focusFrameLimit
    }

    /// `camera.frame_rate` as a frame duration, microseconds (33333 for 30 frames/s).
    private var frameDurationMicroseconds: Int32 { Int32(clamping: Int((1_000_000 / max(request.framesPerSecond, 1)).rounded())) }

    /// The controls a stream starts with: exposure and white balance on (off once locked), continuous
    /// autofocus for the preview (manual once `camera.focus = locked` locked it; a still's stream keeps the
    /// countdown cycle's AfMode), the flicker mode, the frame duration.
    private func startControls(forStill: Bool) -> pb_lc_controls {
        var k = pb_lc_controls.unchanged
        if request.controls.exposure != nil { k.ae_enable = exposureLocked ? 0 : 1 }
        if request.controls.whiteBalance != nil { k.awb_enable = whiteBalanceLocked ? 0 : 1 }
        if knownControls.contains(.focus) {
            if focusLocked { k.af_continuous = 0 } else if !forStill { k.af_continuous = 1 }
        }
        switch request.controls.powerLineFrequency {
        case .some(.hz50): k.flicker_hz = 50
        case .some(.hz60): k.flicker_hz = 60
        case .some(.off): k.flicker_hz = 0
        case .some(.auto): k.flicker_hz = 1
        case nil: break
        }
        if hasFrameDurationLimits { k.frame_duration_us = frameDurationMicroseconds }
        return k
    }

    /// Waits up to `timeoutMilliseconds` for the newest completed request and returns its frame, converted;
    /// nil on timeout (and while exposure settles). Cancelled and failed buffers are counted and skipped.
    /// - Throws: ``LibcameraError`` `ENODEV` (``LibcameraError/isDisconnect``) when libcamera reports the camera gone.
    public func nextFrame(timeoutMilliseconds: Int) throws -> Frame? {
        guard let camera, let stream else {
            throw LibcameraError(call: "wait_frame", code: ENODEV, camera: identity, detail: "not started")
        }
        var f = pb_lc_frame()
        let rc = pb_lc_camera_wait_frame(camera, Int32(clamping: timeoutMilliseconds), &f)
        if rc < 0 { throw libcameraError("request completion", rc, device: identity) }
        if rc == 0 { return nil }
        defer { _ = pb_lc_camera_requeue(camera, f.cookie) }
        stats.framesSkipped += Int(f.skipped)
        if let last = lastSequence, f.sequence > last + 1 + UInt64(f.skipped) {
            stats.framesLost += Int(f.sequence - last - 1 - UInt64(f.skipped))
        }
        lastSequence = f.sequence
        followFocus(f.af_state)
        guard f.status == 0 else {
            if f.status == 2 { stats.noteDropped(.flaggedError) }
            return nil
        }
        var frame: Frame
        do { frame = try Self.convert(f, format: stream.format, chroma: &chroma) } catch {
            stats.noteDropped(error.defect)
            return nil
        }
        frame.turned = turned
        framesSinceStart += 1
        if lockPending, framesSinceStart >= max(request.settleFrames, 10) {
            var k = pb_lc_controls.unchanged
            if request.controls.exposure == .locked { k.ae_enable = 0 }
            if request.controls.whiteBalance == .locked { k.awb_enable = 0 }
            _ = pb_lc_camera_set_controls(camera, &k)
            lockPending = false
            if request.controls.exposure == .locked { exposureLocked = true }
            if request.controls.whiteBalance == .locked { whiteBalanceLocked = true }
        }
        if focusLockPending, Self.focusSettled(afState: f.af_state, frames: framesSinceStart, settleFrames: request.settleFrames) {
            // AfMode manual stops the lens where it is: only once continuous autofocus found focus (a Pi sweeps
            // the lens while it searches), else after the first frames without AfState, else at the limit.
            var k = pb_lc_controls.unchanged
            k.af_continuous = 0
            _ = pb_lc_camera_set_controls(camera, &k)
            focusLockPending = false
            focusLocked = true
            if f.af_state != 2, f.af_state >= 0 {
                notes.append("camera.focus = locked on \(identity): autofocus reported no focus in \(Self.focusFrameLimit) frames; the lens is held where it is")
            }
        }
        if settleLeft > 0 {
            settleLeft -= 1
            stats.framesSettling += 1
            return nil
        }
        stats.framesDelivered += 1
        rateWindow.append(frame.timestamp)
        if rateWindow.count > 30 { rateWindow.removeFirst(rateWindow.count - 30) }
        if let first = rateWindow.first, let last = rateWindow.last, rateWindow.count > 1, last > first {
            stats.measuredFramesPerSecond = Double(rateWindow.count - 1) * 1e9 / Double(last.nanoseconds - first.nanoseconds)
        }
        return frame
    }

    /// A completed request's buffer that is not a whole frame: ``FrameDefect/empty`` or ``FrameDefect/shortFrame``.
    public struct FrameDefectError: Error { public var defect: FrameDefect }

    /// The frame of a completed request (`f`: its size, plane 0's stride in bytes, its planes and the bytes
    /// used of each), converted from `format` as the type's doc says. `chroma` is scratch space kept between
    /// frames (NV12's split chroma). Throws ``FrameDefect/empty`` or ``FrameDefect/shortFrame`` when the planes
    /// hold fewer bytes than the size and stride need.
    public static func convert(_ f: pb_lc_frame, format: LibcameraFormat, chroma: inout [UInt8]) throws(FrameDefectError) -> Frame {
        let w = Int(f.width), h = Int(f.height), stride = Int(f.stride)
        guard w > 0, h > 0, stride >= w, f.plane_count >= 1, let p0 = f.planes.0 else { throw FrameDefectError(defect: .empty) }
        let used0 = Int(f.plane_bytes.0)
        let timestamp = MonotonicInstant(nanoseconds: f.timestamp_ns)
        let sequence = UInt32(truncatingIfNeeded: f.sequence)
        func need(_ n: Int, _ have: Int) throws(FrameDefectError) { if have < n { throw FrameDefectError(defect: have == 0 ? .empty : .shortFrame) } }
        switch format {
        case .rgb888, .bgr888:
            try need(stride * (h - 1) + w * 3, used0)
            var out = [UInt8](repeating: 0, count: w * h * 3)
            out.withUnsafeMutableBufferPointer { dst in
                guard let d = dst.baseAddress else { return }
                if format == .bgr888 {
                    for row in 0..<h { memcpy(d + row * w * 3, p0 + row * stride, w * 3) }
                } else {
                    _ = RAWToRGB24(p0, Int32(stride), d, Int32(w * 3), Int32(w), Int32(h))
                }
            }
            return Frame(format: .rgb24, size: FrameSize(width: w, height: h), bytesPerLine: w * 3, bytes: out, timestamp: timestamp, sequence: sequence)
        case .yuyv:
            try need(stride * (h - 1) + w * 2, used0)
            var out = [UInt8](repeating: 0, count: w * h * 2)
            out.withUnsafeMutableBufferPointer { dst in
                guard let d = dst.baseAddress else { return }
                for row in 0..<h { memcpy(d + row * w * 2, p0 + row * stride, w * 2) }
            }
            return Frame(format: .yuyv, size: FrameSize(width: w, height: h), bytesPerLine: w * 2, bytes: out, timestamp: timestamp, sequence: sequence)
        case .nv12, .yuv420:
            let cw = (w + 1) / 2, ch = (h + 1) / 2
            // One buffer with the planes one after another (plane 0 holding all of them), or one plane each.
            let cbase: UnsafePointer<UInt8>, crbase: UnsafePointer<UInt8>?
            let cstride = format == .nv12 ? stride : stride / 2
            let chromaRow = format == .nv12 ? cw * 2 : cw
            // A chroma row longer than its stride is a layout no pipeline gives (an odd width at stride = width).
            guard cstride >= chromaRow else { throw FrameDefectError(defect: .shortFrame) }
            if f.plane_count >= 2, let p1 = f.planes.1 {
                try need(stride * (h - 1) + w, used0)
                try need(cstride * (ch - 1) + chromaRow, Int(f.plane_bytes.1))
                cbase = p1
                crbase = format == .yuv420 ? (f.plane_count >= 3 ? f.planes.2 : nil) : nil
                if format == .yuv420 {
                    guard crbase != nil else { throw FrameDefectError(defect: .shortFrame) }
                    try need(cstride * (ch - 1) + chromaRow, Int(f.plane_bytes.2))
                }
            } else {
                let lumaBytes = stride * h
                let chromaBytes = format == .nv12 ? cstride * ch : 2 * cstride * ch
                try need(lumaBytes + chromaBytes, used0)
                cbase = p0 + lumaBytes
                crbase = format == .yuv420 ? p0 + lumaBytes + cstride * ch : nil
            }
            var out = [UInt8](repeating: 0, count: ((w + 1) & ~1) * h * 2)
            if format == .nv12 {
                if chroma.count != cw * ch * 2 { chroma = [UInt8](repeating: 0, count: cw * ch * 2) }
                chroma.withUnsafeMutableBufferPointer { c in
                    guard let u = c.baseAddress else { return }
                    SplitUVPlane(cbase, Int32(cstride), u, Int32(cw), u + cw * ch, Int32(cw), Int32(cw), Int32(ch))
                }
                chroma.withUnsafeBufferPointer { c in
                    out.withUnsafeMutableBufferPointer { dst in
                        guard let u = c.baseAddress, let d = dst.baseAddress else { return }
                        _ = I420ToYUY2(p0, Int32(stride), u, Int32(cw), u + cw * ch, Int32(cw), d, Int32(((w + 1) & ~1) * 2), Int32(w), Int32(h))
                    }
                }
            } else if let cr = crbase {
                out.withUnsafeMutableBufferPointer { dst in
                    guard let d = dst.baseAddress else { return }
                    _ = I420ToYUY2(p0, Int32(stride), cbase, Int32(cstride), cr, Int32(cstride), d, Int32(((w + 1) & ~1) * 2), Int32(w), Int32(h))
                }
            }
            return Frame(format: .yuyv, size: FrameSize(width: w, height: h), bytesPerLine: ((w + 1) & ~1) * 2, bytes: out,
                         timestamp: timestamp, sequence: sequence)
        }
    }

    /// The first `/dev/media*` node another process holds: the one with libcamera's lock on it
    /// (``DeviceNodeHolder/lockHolder(_:locks:)``: a camera acquired), else the first with it open
    /// (``DeviceNodeHolder/find(_:)``), and that process.
    static func mediaDeviceHolder() -> (node: String, holder: String)? {
        guard let dev = opendir("/dev") else { return nil }
        defer { closedir(dev) }
        var nodes: [String] = []
        while let e = readdir(dev) {
            let name = String(cArray: e.pointee.d_name)
            if name.hasPrefix("media") { nodes.append("/dev/" + name) }
        }
        for node in nodes.sorted() { if let holder = DeviceNodeHolder.lockHolder(node) { return (node, holder) } }
        for node in nodes.sorted() { if let holder = DeviceNodeHolder.find(node) { return (node, holder) } }
        return nil
    }

    /// Stops the stream, configures the same camera at `size` (pixels) and starts it again, then drops
    /// the request's `settleFrames`. libcamera's vimc and Raspberry Pi pipelines take the new size in a
    /// `Camera::configure` while stopped.
    /// - Throws: ``LibcameraError`` as ``start(_:)``.
    public func reconfigure(size: FrameSize) throws -> StreamInfo {
        guard camera != nil else { throw LibcameraError(call: "Camera::configure", code: ENODEV, camera: identity, detail: "not open") }
        let card = identity
        return try configureAndStart(size: size, card: card, device: identity)
    }

    /// Starts an autofocus cycle (`controls::AfTrigger` Start, `pb_lc_camera_trigger_autofocus`) on the
    /// next request, for a camera that has one; its end (`controls::AfState`) is followed frame by frame
    /// and a failure noted for the log (``takeLogNotes()``). Continuous autofocus resumes after the still's
    /// stream restarts.
    /// - Returns: false when the camera has no autofocus or is not started.
    @discardableResult
    public func triggerAutofocus() -> Bool {
        guard let camera, knownControls.contains(.focus) else { return false }
        guard pb_lc_camera_trigger_autofocus(camera) == 0 else {
            notes.append("autofocus not started on \(identity): \(String(cString: pb_lc_last_error()))")
            return false
        }
        focusPending = (0, false)
        return true
    }

    /// The countdown began: an autofocus cycle (``triggerAutofocus()``) on a camera that has autofocus,
    /// unless `camera.focus = locked` holds the lens where it settled.
    public func prepareStill() {
        guard request.controls.focus != .locked else { return }
        triggerAutofocus()
    }

    /// The autofocus outcomes noted since the last call (a cycle that failed or did not finish), oldest first.
    public func takeLogNotes() -> [String] {
        defer { notes.removeAll() }
        return notes
    }

    /// Follows a triggered autofocus cycle on the AfState of a completed request (libcamera's
    /// `controls::AfStateEnum`: 0 idle, 1 scanning, 2 focused, 3 failed; -1 absent). Requests queued before
    /// the trigger still report the continuous mode's state, so the cycle's end counts only once it was
    /// seen scanning or once those requests (``bufferCount``) have come back.
    private func followFocus(_ afState: Int32) {
        guard var pending = focusPending else { return }
        pending.frames += 1
        if afState == 1 { pending.scanned = true }
        let ours = pending.scanned || pending.frames > bufferCount
        switch afState {
        case 2 where ours:
            focusPending = nil
        case 3 where ours:
            focusPending = nil
            notes.append("autofocus failed on \(identity) (AfState Failed): the still is taken as focused now")
        default:
            if pending.frames >= Self.focusFrameLimit {
                focusPending = nil
                notes.append("autofocus did not finish on \(identity) in \(Self.focusFrameLimit) frames: the still is taken as focused now")
            } else {
                focusPending = pending
            }
        }
    }

    /// The still stream's size when the last start set one up beside the viewfinder; nil with one stream.
    public var stillStreamSize: FrameSize? { still?.size }

    /// The size a still asked at `size` (pixels) will have: the still stream's, as libcamera adjusted it, when
    /// one runs beside the viewfinder; else what libcamera's validate gives a viewfinder stream at `size` in
    /// the stream's format (`pb_lc_camera_validate`: nothing configured). Nil when not started or refused.
    public func offeredSize(nearestTo size: FrameSize) -> FrameSize? {
        guard let camera, let stream else { return nil }
        if let still { return still.size }
        var config = pb_lc_stream_config(role: Int32(PB_LC_ROLE_VIEWFINDER), fourcc: stream.format.rawValue,
                                         width: UInt32(size.width), height: UInt32(size.height), stride: 0, frame_size: 0, buffer_count: 0)
        guard pb_lc_camera_validate(camera, &config) >= 0 else { return nil }
        return FrameSize(width: Int(config.width), height: Int(config.height))
    }

    /// A still buffer joins the next request queued (`pb_lc_camera_request_still`).
    /// - Throws: ``LibcameraError`` when there is no still stream or the camera is not started.
    public func requestStill() throws {
        guard let camera else { throw LibcameraError(call: "request_still", code: ENODEV, camera: identity, detail: "not open") }
        let rc = pb_lc_camera_request_still(camera)
        if rc < 0 { throw libcameraError("request_still", rc, device: identity) }
    }

    /// The oldest still the still stream delivered (`pb_lc_camera_take_still`), converted like a live frame
    /// (``convert(_:format:chroma:)``) and its buffer given back; nil when none waits, or when it failed or
    /// was not whole (counted as a dropped frame).
    /// A still that failed or is not whole asks for another (``requestStill()``), so the capture waiting for
    /// it still gets one. A still delivered sets continuous autofocus again where the camera has it (the
    /// countdown's cycle left AfMode at auto, and with a still stream no restart resets it).
    public func takeStillFrame() -> Frame? {
        guard let camera, let still else { return nil }
        var f = pb_lc_frame()
        while pb_lc_camera_take_still(camera, &f) == 1 {
            defer { _ = pb_lc_camera_release_still(camera, f.cookie) }
            if f.status == 0 {
                do {
                    var frame = try Self.convert(f, format: still.format, chroma: &stillChroma)
                    frame.turned = turned
                    if knownControls.contains(.focus), !focusLocked {
                        var k = pb_lc_controls.unchanged
                        k.af_continuous = 1
                        _ = pb_lc_camera_set_controls(camera, &k)
                    }
                    return frame
                } catch {
                    stats.noteDropped(error.defect)
                }
            } else if f.status == 2 {
                stats.noteDropped(.flaggedError)
            }
            _ = pb_lc_camera_request_still(camera)
        }
        return nil
    }

    public func stop() {
        if let camera { pb_lc_camera_close(camera) }
        camera = nil
        if let manager { pb_lc_manager_free(manager) }
        manager = nil
        stream = nil
        still = nil
    }
}

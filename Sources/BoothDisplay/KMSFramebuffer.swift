import BoothCore
import CDRMShims
import CFramebufferShims
import Glibc
import Synchronization

/// What a DRM card offers, from ``KMSFramebuffer/probe(_:)``: for `display.device = auto` and
/// `photoboothctl devices`.
public struct KMSCardInfo: Sendable, Equatable {
    public var path: String
    /// The kernel driver (`drmGetVersion`): `bochs-drm`, `vc4`, `i915`.
    public var driver: String
    /// Connectors on the card, and of them connected (with modes).
    public var connectors: Int, connected: Int
    /// The first connected connector (`HDMI-A-1`) and its preferred mode (`1920x1080`, 60 Hz); nil when none is connected.
    public var connector: String?
    public var mode: FrameSize?
    public var refreshHz: Int?

    /// Each field as described above.
    public init(path: String, driver: String, connectors: Int, connected: Int, connector: String?, mode: FrameSize?, refreshHz: Int?) {
        self.path = path
        self.driver = driver
        self.connectors = connectors
        self.connected = connected
        self.connector = connector
        self.mode = mode
        self.refreshHz = refreshHz
    }
}

/// A DRM/KMS screen (`/dev/dri/cardN`) through libdrm, as a ``Framebuffer``: one connected connector
/// at its preferred mode, two dumb buffers in XRGB8888 drawn in turn (the frame is drawn off-screen
/// as on fbdev, then copied into the back buffer), shown with `drmModePageFlip` on the next vblank
/// so the live view never tears. The first frame sets the CRTC (`drmModeSetCrtc`, DPMS on); closing
/// gives the CRTC back as it was (the console's own buffer).
///
/// DRM master: the descriptor that opens a card nobody holds becomes master. When another client
/// holds it (a boot splash, a desktop), setting the CRTC fails with `EACCES`: the booth logs it once,
/// keeps the frame, and on each later ``present(_:)`` at most every `retryMilliseconds` tries again —
/// `drmSetMaster` on the descriptor it holds (which the kernel allows without `CAP_SYS_ADMIN` only to a
/// descriptor that was master before), else it opens the card anew (a new descriptor becomes master
/// when nobody holds it). It draws again from the next frame once master is back. `present` may be
/// called from one thread at a time (the display thread).
// @unchecked: the libdrm state is used only by `present`, from the display thread; the counters are
// behind a Mutex.
public final class KMSFramebuffer: Framebuffer, @unchecked Sendable {
    public let path: String
    public let format: FramebufferFormat
    public let info: KMSCardInfo
    private var kms: OpaquePointer?
    private let log: @Sendable (String) -> Void
    private let report: @Sendable (String) -> Void
    private var lastReport: (at: MonotonicInstant, flips: UInt64, presented: Int)?
    private var presented = 0
    private let now: @Sendable () -> MonotonicInstant
    private let retryMilliseconds: Int64
    private var masterLostAt: MonotonicInstant?
    private var lastRetry: MonotonicInstant?
    private let stats = Mutex(Stats())

    /// Page flips completed, frames skipped while not master, and whether the descriptor is master now.
    public struct Stats: Sendable, Equatable {
        public var flips: UInt64 = 0
        public var framesWithoutMaster = 0
        public var isMaster = false
        public var flipTimeouts = 0
    }

    /// Opens `path`, finds the connected connector and its mode, makes and maps the two buffers.
    /// Nothing is shown until the first ``present(_:)``.
    /// - Parameters:
    ///   - mode: the mode's size to use; nil for the connector's preferred mode.
    ///   - now: the clock of the master retries and the flip reports (CLOCK_MONOTONIC; tests inject theirs).
    ///   - log: warnings (master lost and regained, a failed flip); `info`: every 10 s while frames come,
    ///     the page flips completed and the frames presented in that time.
    /// - Throws: ``FramebufferError/call(_:errno:device:)`` naming the step: `open`, `no KMS`
    ///   (ENODEV: not a modesetting card), `no connected connector` (ENOENT), a mode the connector
    ///   lacks (EINVAL), the dumb buffers (`DRM_IOCTL_MODE_CREATE_DUMB`, `mmap`).
    public init(path: String, mode: FrameSize? = nil, retryMilliseconds: Int64 = 1000,
                now: @escaping @Sendable () -> MonotonicInstant, log: @escaping @Sendable (String) -> Void,
                info report: @escaping @Sendable (String) -> Void = { _ in }) throws(FramebufferError) {
        self.path = path
        self.log = log
        self.report = report
        self.now = now
        self.retryMilliseconds = retryMilliseconds
        let (k, info) = try KMSFramebuffer.open(path, mode: mode)
        kms = k
        self.info = info
        var pitch: UInt32 = 0
        _ = pb_kms_back(k, 0, &pitch)
        format = .xrgb8888(info.mode ?? FrameSize(width: 0, height: 0), lineLength: Int(pitch))
        stats.withLock { $0.isMaster = pb_kms_is_master(k) != 0 }
    }

    private static func open(_ path: String, mode: FrameSize?) throws(FramebufferError) -> (OpaquePointer, KMSCardInfo) {
        var i = pb_kms_info()
        var why = [CChar](repeating: 0, count: 256)
        guard let k = pb_kms_open(path, UInt32(mode?.width ?? 0), UInt32(mode?.height ?? 0), &i, &why, why.count) else {
            let e = errno
            throw .call(KMSFramebuffer.text(why), errno: e, device: path)
        }
        return (k, KMSCardInfo(i, path: path))
    }

    /// What `path` offers, without keeping it open (`drmModeGetResources`, the connectors).
    /// - Throws: ``FramebufferError/call(_:errno:device:)`` when it does not open or is no KMS device.
    public static func probe(_ path: String) throws(FramebufferError) -> KMSCardInfo {
        var i = pb_kms_info()
        var why = [CChar](repeating: 0, count: 256)
        guard pb_kms_probe(path, &i, &why, why.count) == 0 else { let e = errno; throw .call(KMSFramebuffer.text(why), errno: e, device: path) }
        return KMSCardInfo(i, path: path)
    }

    /// A C string from its buffer.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The `/dev/dri/card*` nodes, by number.
    public static func cards(directory: String = "/dev/dri") -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name.hasPrefix("card"), Int(name.dropFirst(4)) != nil { names.append(name) }
        }
        return names.sorted { Int($0.dropFirst(4)) ?? 0 < Int($1.dropFirst(4)) ?? 0 }.map { "\(directory)/\($0)" }
    }

    public var currentStats: Stats {
        var s = stats.withLock { $0 }
        if let k = kms { s.flips = pb_kms_flips(k) }
        return s
    }

    deinit { if let k = kms { pb_kms_close(k) } }

    public func present(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard packed.count >= f.rowBytes * f.size.height else { return }
        show { base in cfb_copy_rows(base, f.lineLength, packed.baseAddress, f.rowBytes, f.rowBytes, f.size.height) }
    }

    public func presentMirrored(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard packed.count >= f.rowBytes * f.size.height else { return }
        show { base in copyMirrored(packed, to: base, format: f) }
    }

    /// Draws into the back buffer with `draw` and flips to it; handles a master held by another client.
    private func show(_ draw: (UnsafeMutableRawPointer) -> Void) {
        if masterLostAt != nil, !regainMaster() {
            stats.withLock { $0.framesWithoutMaster += 1 }
            return
        }
        guard let k = kms else { return }
        var pitch: UInt32 = 0
        // A flip waits for the next vblank: at 30 frames/s on a 60 Hz screen it is done long before.
        guard let back = pb_kms_back(k, 100, &pitch) else {
            let timeouts = stats.withLock { s in s.flipTimeouts += 1; return s.flipTimeouts }
            if timeouts == 1 || timeouts % 100 == 0 {
                log("display: \(path): a page flip has not completed after 100 ms (\(timeouts) so far); setting the CRTC again")
            }
            pb_kms_need_modeset(k)
            return
        }
        draw(back)
        let r = pb_kms_flip(k)
        if r == 0 {
            presented += 1
            reportFlips(k)
            return
        }
        if r == -EACCES || r == -EPERM {
            masterLostAt = now()
            lastRetry = masterLostAt
            stats.withLock { $0.isMaster = false; $0.framesWithoutMaster += 1 }
            log("display: \(path): not the DRM master (another program holds the screen: \(String(cString: strerror(-r)))); "
                + "trying again every \(retryMilliseconds / 1000) s")
            pb_kms_need_modeset(k)
        } else {
            log("display: \(path): page flip failed: \(String(cString: strerror(-r))) (errno \(-r)); setting the CRTC again")
            pb_kms_need_modeset(k)
        }
    }

    /// Every 10 s: `display: /dev/dri/card0: 300 page flips in 10.0 s (30.0/s), 300 frames presented`.
    private func reportFlips(_ k: OpaquePointer) {
        let t = now(), flips = pb_kms_flips(k)
        guard let last = lastReport else { lastReport = (t, flips, presented); return }
        let seconds = t.milliseconds(since: last.at) / 1000
        guard seconds >= 10 else { return }
        let n = flips &- last.flips
        report("display: \(path): \(n) page flips in \(String(format1: seconds)) s (\(String(format1: Double(n) / seconds))/s), "
               + "\(presented - last.presented) frames presented")
        lastReport = (t, flips, presented)
    }

    /// At most every `retryMilliseconds`: master on the held descriptor, else a new one. True when master.
    private func regainMaster() -> Bool {
        let t = now()
        if let last = lastRetry, t < last.adding(milliseconds: retryMilliseconds) { return false }
        lastRetry = t
        guard let k = kms else { return false }
        if pb_kms_is_master(k) != 0 || pb_kms_set_master(k) == 0 {
            return mastered("on the descriptor it held")
        }
        // Never master on this descriptor (another client held the card when it was opened): open it anew.
        pb_kms_close(k)
        kms = nil
        do {
            let (fresh, _) = try KMSFramebuffer.open(path, mode: format.size)
            kms = fresh
            var pitch: UInt32 = 0
            _ = pb_kms_back(fresh, 0, &pitch)
            if Int(pitch) != format.lineLength {
                log("display: \(path): the card's buffers changed their stride; waiting")
                return false
            }
            if pb_kms_is_master(fresh) != 0 { return mastered("by opening the card again") }
        } catch {
            log("display: \(path): could not open it again: \(error)")
        }
        return false
    }

    private func mastered(_ how: String) -> Bool {
        let since = masterLostAt.map { now().milliseconds(since: $0) } ?? 0
        masterLostAt = nil
        stats.withLock { $0.isMaster = true }
        if let k = kms { pb_kms_need_modeset(k) }
        log("display: \(path): DRM master again \(how) after \(Int(since / 1000)) s; drawing")
        return true
    }
}

extension String {
    /// `12.3`: one decimal, without Foundation's formatter.
    init(format1 value: Double) {
        let tenths = Int((value * 10).rounded())
        self = "\(tenths / 10).\(abs(tenths % 10))"
    }
}

extension KMSCardInfo {
    init(_ i: pb_kms_info, path: String) {
        func text<T>(_ tuple: T) -> String { withUnsafeBytes(of: tuple) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } }
        self.init(path: path, driver: text(i.driver), connectors: Int(i.connectors), connected: Int(i.connected),
                  connector: i.width > 0 ? text(i.connector) : nil,
                  mode: i.width > 0 ? FrameSize(width: Int(i.width), height: Int(i.height)) : nil,
                  refreshHz: i.width > 0 ? Int(i.refresh) : nil)
    }
}

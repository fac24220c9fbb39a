import BoothClock
import BoothCore
import BoothSystem
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
/// as on fbdev, then copied into the buffer not on screen), shown with `drmModePageFlip` on the next
/// vblank so the live view never tears (C shim `pb_kms_back`, `pb_kms_flip`). The first frame sets
/// the CRTC (`drmModeSetCrtc`, DPMS on); ``close()`` gives the CRTC back as it was (the console's own
/// buffer).
///
/// A frame that finds the last flip still pending after 100 ms is dropped (counted in
/// ``Stats/flipTimeouts``); after 2 s of pending the flip is given up and the next frame sets the
/// CRTC anew.
///
/// DRM master: the descriptor that opens a card nobody holds becomes master. When another client
/// holds it (a boot splash, a desktop), setting the CRTC fails with `EACCES`: the booth logs it once,
/// keeps the frame, and on each later ``present(_:)`` at most every `retryMilliseconds` tries again —
/// `drmSetMaster` on the descriptor it holds (which the kernel allows without `CAP_SYS_ADMIN` only to a
/// descriptor that was master before), else a bare `open` of the card that is kept, and the buffers
/// made on it, only when it became master (nobody holds it any more). It draws again from the next
/// frame once master is back. `present` is called from one thread at a time (the display thread);
/// ``currentStats`` from any.
public final class KMSFramebuffer: Framebuffer, Sendable {
    public let path: String
    /// XRGB8888 at the mode's size; `lineLength` is the stride of the buffers made at open (a buffer
    /// made again after master was regained may differ: frames are copied with its own).
    public let format: FramebufferFormat
    public let info: KMSCardInfo
    private let log: @Sendable (String) -> Void
    private let report: @Sendable (String) -> Void
    private let now: @Sendable () -> MonotonicInstant
    private let retryMilliseconds: Int64
    /// The libdrm state, used by `present` (display thread) and `close`.
    private struct Card {
        var kms: OpaquePointer?
        var lastReport: (at: MonotonicInstant, flips: UInt64, presented: Int)?
        var presented = 0
        var masterLostAt: MonotonicInstant?
        var lastRetry: MonotonicInstant?
        /// The last sentence a master retry logged (repeats are not logged again).
        var retryNote: String?
        var pendingSince: MonotonicInstant?
        /// A flip or CRTC set that failed (not for want of master): frames are dropped until
        /// `retryMilliseconds` later, and the failures counted for the log.
        var failedAt: MonotonicInstant?
        var failures = 0
        /// Flips completed on descriptors closed since (a reopen starts the C counter again).
        var flipsBase: UInt64 = 0
        var closed = false
    }
    // `@unchecked`: the card's pointer is used only inside `card`'s lock.
    private struct Locked: @unchecked Sendable { var card: Card }
    private let card: Mutex<Locked>
    private let stats = Mutex(Stats())

    /// What the screen did so far; read from any thread.
    public struct Stats: Sendable, Equatable {
        /// Page flips completed (their vblank events), all descriptors together.
        public var flips: UInt64 = 0
        /// Frames not shown because another client held DRM master.
        public var framesWithoutMaster = 0
        /// Whether the descriptor in use is DRM master now.
        public var isMaster = false
        /// Frames dropped because the previous flip had not completed after 100 ms.
        public var flipTimeouts = 0
    }

    /// Opens `path`, finds the connected connector and its mode, makes and maps the two buffers
    /// (`pb_kms_open`: `drmModeGetResources`, `DRM_IOCTL_MODE_CREATE_DUMB`, `drmModeAddFB`, `mmap`).
    /// Nothing is shown until the first ``present(_:)``.
    /// - Parameters:
    ///   - mode: the mode's size to use; nil for the connector's preferred mode.
    ///   - retryMilliseconds: between master retries while another client holds it.
    ///   - now: the clock of the master retries, the flip timeouts and the flip reports (CLOCK_MONOTONIC;
    ///     tests inject theirs).
    ///   - log: warnings (master lost and regained, a failed flip); `info`: every 10 s while frames come,
    ///     the page flips completed and the frames presented in that time.
    /// - Throws: ``FramebufferError/call(_:errno:device:)`` naming the step: `open` (ENOENT: no such
    ///   node), `no KMS` (ENODEV: not a modesetting card), `no connected connector` (ENOLINK), a mode
    ///   the connector lacks (EINVAL), the dumb buffers.
    public init(path: String, mode: FrameSize? = nil, retryMilliseconds: Int64 = 1000,
                now: @escaping @Sendable () -> MonotonicInstant, log: @escaping @Sendable (String) -> Void,
                info report: @escaping @Sendable (String) -> Void = { _ in }) throws(FramebufferError) {
        self.path = path
        self.log = log
        self.report = report
        self.now = now
        self.retryMilliseconds = retryMilliseconds
        let (k, info) = try KMSFramebuffer.open(path, mode: mode, fd: nil)
        self.info = info
        format = .xrgb8888(info.mode ?? FrameSize(width: 0, height: 0), lineLength: Int(pb_kms_pitch(k)))
        card = Mutex(Locked(card: Card(kms: k)))
        stats.withLock { $0.isMaster = pb_kms_is_master(k) != 0 }
    }

    /// `pb_kms_open`, or `pb_kms_open_fd` on a descriptor already open (which it then owns).
    private static func open(_ path: String, mode: FrameSize?, fd: Int32?) throws(FramebufferError) -> (OpaquePointer, KMSCardInfo) {
        var i = pb_kms_info()
        var why = [CChar](repeating: 0, count: 256)
        let w = UInt32(mode?.width ?? 0), h = UInt32(mode?.height ?? 0)
        let opened = fd.map { pb_kms_open_fd($0, path, w, h, &i, &why, why.count) } ?? pb_kms_open(path, w, h, &i, &why, why.count)
        guard let k = opened else {
            let e = errno
            throw .call(String(nulTerminated: why), errno: e, device: path)
        }
        return (k, KMSCardInfo(i, path: path))
    }

    /// What `path` offers, without keeping it open (`drmModeGetResources`, the connectors).
    /// - Throws: ``FramebufferError/call(_:errno:device:)`` when it does not open or is no KMS device.
    public static func probe(_ path: String) throws(FramebufferError) -> KMSCardInfo {
        var i = pb_kms_info()
        var why = [CChar](repeating: 0, count: 256)
        guard pb_kms_probe(path, &i, &why, why.count) == 0 else { let e = errno; throw .call(String(nulTerminated: why), errno: e, device: path) }
        return KMSCardInfo(i, path: path)
    }

    /// The `/dev/dri/card*` nodes, by number.
    public static func cards(directory: String = "/dev/dri") -> [String] {
        listDirectory(directory)
            .filter { $0.hasPrefix("card") && Int($0.dropFirst(4)) != nil }
            .sorted { Int($0.dropFirst(4)) ?? 0 < Int($1.dropFirst(4)) ?? 0 }
            .map { "\(directory)/\($0)" }
    }

    /// The counters, as of the last frame presented.
    public var currentStats: Stats { stats.withLock { $0 } }

    /// Gives the CRTC back as it was and closes the card (`pb_kms_close`); later frames are ignored.
    /// Call it after the drawing thread has stopped. Safe to call twice.
    public func close() {
        card.withLock { l in
            if let k = l.card.kms { pb_kms_close(k) }
            l.card.kms = nil
            l.card.closed = true
        }
    }

    deinit { close() }

    public func present(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard packed.count >= f.rowBytes * f.size.height else { return }
        show { base, pitch in cfb_copy_rows(base, pitch, packed.baseAddress, f.rowBytes, f.rowBytes, f.size.height) }
    }

    public func presentMirrored(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard packed.count >= f.rowBytes * f.size.height else { return }
        show { base, pitch in copyMirrored(packed, to: base, format: .xrgb8888(f.size, lineLength: pitch)) }
    }

    /// Draws into the back buffer with `draw` (its base and stride) and flips to it; handles a master
    /// held by another client and a flip that does not complete.
    private func show(_ draw: (UnsafeMutableRawPointer, Int) -> Void) {
        card.withLock { l in
            guard !l.card.closed else { return }
            if l.card.masterLostAt != nil || l.card.kms == nil, !regainMaster(&l.card) {
                stats.withLock { $0.framesWithoutMaster += 1 }
                return
            }
            if let failed = l.card.failedAt, now() < failed.adding(milliseconds: retryMilliseconds) { return }
            guard let k = l.card.kms else { return }
            var pitch: UInt32 = 0, waited: Int32 = 0
            // A flip waits for the next vblank: at 30 frames/s on a 60 Hz screen it is done long before.
            guard let back = pb_kms_back(k, 100, &pitch, &waited) else {
                flipNotDone(k, waited, &l.card)
                return
            }
            l.card.pendingSince = nil
            draw(back, Int(pitch))
            let r = pb_kms_flip(k)
            let flips = l.card.flipsBase + pb_kms_flips(k)
            stats.withLock { $0.flips = flips }
            if r == 0 {
                if l.card.failures > 0 {
                    log("display: \(path): drawing again after \(l.card.failures) failed page flips")
                    l.card.failures = 0
                }
                l.card.failedAt = nil
                l.card.presented += 1
                reportFlips(flips, &l.card)
            } else if r == -EACCES || r == -EPERM {
                l.card.masterLostAt = now()
                l.card.lastRetry = l.card.masterLostAt
                stats.withLock { $0.isMaster = false; $0.framesWithoutMaster += 1 }
                log("display: \(path): not the DRM master (another program holds the screen: \(SystemCallError.reason(of: -r))); "
                    + "trying again every \(String(format1: Double(retryMilliseconds) / 1000)) s")
                pb_kms_need_modeset(k)
            } else {
                // ENODEV (a display gone, a GPU reset), EINVAL (a screen without the mode): tried again
                // every `retryMilliseconds`, said at the first failure and every 100th.
                l.card.failures += 1
                l.card.failedAt = now()
                if KMSFramebuffer.worthSaying(l.card.failures) {
                    log("display: \(path): page flip failed: \(SystemCallError.reason(of: -r)) (errno \(-r), \(l.card.failures) so far); "
                        + "setting the CRTC again in \(String(format1: Double(retryMilliseconds) / 1000)) s")
                }
                pb_kms_need_modeset(k)
            }
        }
    }

    /// The previous flip has not completed (`waited` 0) or waiting for it failed (-errno): the frame
    /// is dropped; after 2 s of pending the flip is given up.
    private func flipNotDone(_ k: OpaquePointer, _ waited: Int32, _ c: inout Card) {
        let timeouts = stats.withLock { s in s.flipTimeouts += 1; return s.flipTimeouts }
        let t = now()
        let since = c.pendingSince ?? t
        c.pendingSince = since
        if waited < 0 {
            if KMSFramebuffer.worthSaying(timeouts) {
                log("display: \(path): waiting for a page flip failed: \(SystemCallError.reason(of: -waited)) (\(timeouts) frames dropped so far)")
            }
        } else if KMSFramebuffer.worthSaying(timeouts) {
            log("display: \(path): a page flip has not completed after 100 ms; frame dropped (\(timeouts) so far)")
        }
        if t.milliseconds(since: since) >= 2000 {
            log("display: \(path): no page-flip event for 2 s; giving the flip up and setting the CRTC again")
            pb_kms_forget_flip(k)
            pb_kms_need_modeset(k)
            c.pendingSince = nil
        }
    }

    /// The 1st, 100th, 200th… of a repeated failure: what is logged of it.
    static func worthSaying(_ count: Int) -> Bool { count == 1 || count % 100 == 0 }

    /// Every 10 s: `display: /dev/dri/card0: 300 page flips in 10.0 s (30.0/s), 300 frames presented`.
    private func reportFlips(_ flips: UInt64, _ c: inout Card) {
        let t = now()
        guard let last = c.lastReport, flips >= last.flips else { c.lastReport = (t, flips, c.presented); return }
        let seconds = t.milliseconds(since: last.at) / 1000
        guard seconds >= 10 else { return }
        let n = flips - last.flips
        report("display: \(path): \(n) page flips in \(String(format1: seconds)) s (\(String(format1: Double(n) / seconds))/s), "
               + "\(c.presented - last.presented) frames presented")
        c.lastReport = (t, flips, c.presented)
    }

    /// At most every `retryMilliseconds`: master on the held descriptor (`drmSetMaster`), else a bare
    /// open that became master (`pb_kms_open_master`), on which the buffers are made again. True when
    /// master.
    private func regainMaster(_ c: inout Card) -> Bool {
        let t = now()
        if let last = c.lastRetry, t < last.adding(milliseconds: retryMilliseconds) { return false }
        c.lastRetry = t
        if c.masterLostAt == nil { c.masterLostAt = t }
        if let k = c.kms, pb_kms_is_master(k) != 0 || pb_kms_set_master(k) == 0 {
            return mastered("on the descriptor it held", &c)
        }
        // Never master on this descriptor (another client held the card when it was opened): a new
        // one is master only when nobody holds it.
        let fd = pb_kms_open_master(path)
        guard fd >= 0 else {
            if fd != -EBUSY {
                note("display: \(path): cannot open it: \(SystemCallError.reason(of: -fd)); trying again every "
                     + "\(String(format1: Double(retryMilliseconds) / 1000)) s", &c)
            }
            return false
        }
        if let k = c.kms {
            c.flipsBase += pb_kms_flips(k)
            pb_kms_close(k)
        }
        c.kms = nil
        do {
            let (fresh, _) = try KMSFramebuffer.open(path, mode: format.size, fd: fd)
            c.kms = fresh
            return mastered("by opening the card again", &c)
        } catch {
            note("display: \(path): could not open it again: \(error)", &c)
            return false
        }
    }

    /// Logs `sentence` unless it was the last one logged by a retry.
    private func note(_ sentence: String, _ c: inout Card) {
        guard c.retryNote != sentence else { return }
        c.retryNote = sentence
        log(sentence)
    }

    private func mastered(_ how: String, _ c: inout Card) -> Bool {
        let since = c.masterLostAt.map { now().milliseconds(since: $0) } ?? 0
        c.masterLostAt = nil
        c.retryNote = nil
        stats.withLock { $0.isMaster = true }
        if let k = c.kms { pb_kms_need_modeset(k) }
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
        self.init(path: path, driver: String(cArray: i.driver), connectors: Int(i.connectors), connected: Int(i.connected),
                  connector: i.width > 0 ? String(cArray: i.connector) : nil,
                  mode: i.width > 0 ? FrameSize(width: Int(i.width), height: Int(i.height)) : nil,
                  refreshHz: i.width > 0 ? Int(i.refresh) : nil)
    }
}

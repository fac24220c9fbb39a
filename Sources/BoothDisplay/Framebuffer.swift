import BoothCore
import BoothSystem
import CFramebufferShims
import CYUV
import Glibc
import Synchronization

/// A failed framebuffer, console or KMS call.
public enum FramebufferError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A system call on the fbdev or the console failed: its ``SystemCallError`` (the call or ioctl,
    /// e.g. `FBIOGET_VSCREENINFO` with ENOTTY, the device node as its subject).
    case failed(SystemCallError)
    /// A KMS step failed: the CDRMShims' sentence for the step (`"/dev/dri/card0: no KMS (No such device)"`),
    /// the errno it left and the card, e.g. `FramebufferError.call("… no connected connector …", errno: ENOLINK, device: "/dev/dri/card1")`.
    case call(String, errno: Int32, device: String)
    /// The driver's pixel layout is one the booth cannot draw (not 16/32 bpp, or odd bitfields).
    case unsupportedFormat(String)

    /// `call` failed just now on the device at `path`: reads the calling thread's `errno`.
    static func last(_ call: String, _ path: String) -> FramebufferError { .failed(SystemCallError.last(call, path)) }

    public var description: String {
        switch self {
        case let .failed(error): "\(error.call) on \(error.subject): \(error.errnoText)"
        case let .call(call, errno, device): "\(call) on \(device): \(SystemCallError.text(of: errno))"
        case let .unsupportedFormat(format): "framebuffer format not supported: \(format)"
        }
    }
}

/// Where converted frames land: a real fbdev (``FramebufferDevice``) or memory (``MemoryFramebuffer``).
public protocol Framebuffer: AnyObject, Sendable {
    /// The layout frames must be in.
    var format: FramebufferFormat { get }
    /// Copies a packed frame (`format.rowBytes` per row, `format.size.height` rows) into the visible
    /// area line by line, honouring `format.lineLength`. Ignored when `packed` is shorter than that.
    func present(_ packed: UnsafeRawBufferPointer)
    /// As ``present(_:)`` for a 32 bpp frame stored right to left: each row is reversed on its way
    /// in (the pixel at `x` lands at `width - 1 - x`), so the copy into framebuffer memory is also the
    /// live view's mirror. Ignored for other depths or a short `packed`.
    func presentMirrored(_ packed: UnsafeRawBufferPointer)
    /// Gives the device back (a KMS card's CRTC to the console) once nothing draws any more; later
    /// frames are ignored. The default does nothing (an fbdev has nothing to give back).
    func close()
}

extension Framebuffer {
    public func close() {}

    /// ``present(_:)`` from an array.
    public func present(_ packed: [UInt8]) { packed.withUnsafeBytes { present($0) } }

    /// Default for framebuffers that only copy: mirrors into a packed buffer (`ARGBMirror`), then
    /// ``present(_:)``. Ignored unless `format.bitsPerPixel` is 32 and `packed` is a whole frame.
    public func presentMirrored(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard f.bitsPerPixel == 32, packed.count >= f.rowBytes * f.size.height else { return }
        var mirrored = [UInt8](repeating: 0, count: f.rowBytes * f.size.height)
        mirrored.withUnsafeMutableBufferPointer { d in
            _ = ARGBMirror(packed.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(f.rowBytes),
                           d.baseAddress, Int32(f.rowBytes), Int32(f.size.width), Int32(f.size.height))
        }
        present(mirrored)
    }
}

/// Copies a packed 32 bpp frame into memory at `base` (`lineLength` bytes per line) with each row
/// reversed, in one pass (libyuv's `ARGBMirror`, which moves whole 4-byte pixels, so any 32 bpp
/// bitfield layout is kept). `packed` must hold `format.rowBytes` × `format.size.height` bytes and
/// `base` `format.lineLength` × `format.size.height`; the caller checks both.
public func copyMirrored(_ packed: UnsafeRawBufferPointer, to base: UnsafeMutableRawPointer?, format f: FramebufferFormat) {
    _ = ARGBMirror(packed.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(f.rowBytes),
                   base?.assumingMemoryBound(to: UInt8.self), Int32(f.lineLength), Int32(f.size.width), Int32(f.size.height))
}

/// A framebuffer in memory, `lineLength * height` bytes: for tests and for rendering to files.
public final class MemoryFramebuffer: Framebuffer {
    public let format: FramebufferFormat
    private let memory: Mutex<[UInt8]>
    private let frames = Mutex(0)

    /// Memory filled with `fill` bytes (so padding past each row stays recognisable).
    public init(format: FramebufferFormat, fill: UInt8 = 0) {
        self.format = format
        memory = Mutex([UInt8](repeating: fill, count: format.lineLength * format.size.height))
    }

    /// The raw memory, `lineLength` bytes per line.
    public var bytes: [UInt8] { memory.withLock { $0 } }
    /// Frames presented so far.
    public var presented: Int { frames.withLock { $0 } }

    public func present(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard packed.count >= f.rowBytes * f.size.height else { return }
        memory.withLock { m in
            m.withUnsafeMutableBytes { dst in
                cfb_copy_rows(dst.baseAddress, f.lineLength, packed.baseAddress, f.rowBytes, f.rowBytes, f.size.height)
            }
        }
        frames.withLock { $0 += 1 }
    }

    public func presentMirrored(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard f.bitsPerPixel == 32, packed.count >= f.rowBytes * f.size.height else { return }
        memory.withLock { m in
            m.withUnsafeMutableBytes { copyMirrored(packed, to: $0.baseAddress, format: f) }
        }
        frames.withLock { $0 += 1 }
    }

    /// The pixel at (`x`, `y`) as `0xRRGGBB`.
    public func rgb(x: Int, y: Int) -> UInt32 {
        let f = format
        guard x >= 0, y >= 0, x < f.size.width, y < f.size.height else { return 0 }
        return memory.withLock { m in
            let at = y * f.lineLength + x * f.bytesPerPixel
            var v: UInt32 = 0
            for i in 0..<f.bytesPerPixel { v |= UInt32(m[at + i]) << UInt32(8 * i) }
            return f.rgb(pixel: v)
        }
    }
}

/// A Linux framebuffer device (`/dev/fbN`) in the mode the driver gives: opened read-write, its
/// layout read with `FBIOGET_VSCREENINFO` and `FBIOGET_FSCREENINFO`, its memory mapped
/// (`mmap` of `smem_len` bytes, shared). Frames are converted off-screen and copied into the
/// visible area (at `xoffset`/`yoffset`), so nothing tears for long even without panning.
/// `present` may be called from one thread at a time (the display thread).
// @unchecked: the mapping is written only by `present`, which the display thread alone calls; the
// other fields are immutable.
public final class FramebufferDevice: Framebuffer, @unchecked Sendable {
    public let path: String
    public let format: FramebufferFormat
    /// The driver's name (`fb_fix_screeninfo.id`), e.g. `"bochs-drmdrmfb"`.
    public let driver: String
    private let fd: Int32
    private let map: UnsafeMutableRawPointer
    private let mapLength: Int
    private let visibleOffset: Int

    /// Opens and maps `path`.
    /// - Throws: ``FramebufferError/call(_:errno:device:)`` for `open`, `FBIOGET_VSCREENINFO`,
    ///   `FBIOGET_FSCREENINFO` or `mmap`; ``FramebufferError/unsupportedFormat(_:)`` for a layout
    ///   that is not 16/32 bpp packed RGB or memory too small for it.
    public init(path: String) throws(FramebufferError) {
        self.path = path
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw .last("open", path) }
        var v = fb_var_screeninfo(), f = fb_fix_screeninfo()
        guard cfb_get_vscreeninfo(fd, &v) == 0 else { let e = FramebufferError.last("FBIOGET_VSCREENINFO", path); Glibc.close(fd); throw e }
        guard cfb_get_fscreeninfo(fd, &f) == 0 else { let e = FramebufferError.last("FBIOGET_FSCREENINFO", path); Glibc.close(fd); throw e }
        let format = FramebufferFormat(size: FrameSize(width: Int(v.xres), height: Int(v.yres)),
                                       bitsPerPixel: Int(v.bits_per_pixel), lineLength: Int(f.line_length),
                                       red: Bitfield(offset: Int(v.red.offset), length: Int(v.red.length)),
                                       green: Bitfield(offset: Int(v.green.offset), length: Int(v.green.length)),
                                       blue: Bitfield(offset: Int(v.blue.offset), length: Int(v.blue.length)))
        do { try format.validate() } catch { Glibc.close(fd); throw error }
        let offset = Int(v.yoffset) * format.lineLength + Int(v.xoffset) * format.bytesPerPixel
        let length = Int(f.smem_len)
        guard length >= offset + format.lineLength * (format.size.height - 1) + format.rowBytes else {
            Glibc.close(fd)
            throw .unsupportedFormat("\(format) needs more than the \(length) bytes of video memory")
        }
        guard let m = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), m != MAP_FAILED else {
            let e = FramebufferError.last("mmap", path); Glibc.close(fd); throw e
        }
        _ = cfb_unblank(fd)  // best effort: a driver without FBIOBLANK is already on
        self.fd = fd
        self.map = m
        self.mapLength = length
        self.visibleOffset = offset
        self.format = format
        self.driver = String(cArray: f.id)
    }

    deinit {
        munmap(map, mapLength)
        Glibc.close(fd)
    }

    public func present(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard packed.count >= f.rowBytes * f.size.height else { return }
        cfb_copy_rows(map + visibleOffset, f.lineLength, packed.baseAddress, f.rowBytes, f.rowBytes, f.size.height)
    }

    public func presentMirrored(_ packed: UnsafeRawBufferPointer) {
        let f = format
        guard f.bitsPerPixel == 32, packed.count >= f.rowBytes * f.size.height else { return }
        copyMirrored(packed, to: map + visibleOffset, format: f)
    }
}

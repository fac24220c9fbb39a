import BoothClock
import BoothCore
import BoothIndex
import BoothJPEG
import BoothPorts
import BoothStorage
import BoothSystem
import Glibc
import Synchronization

/// Why a thumbnail could not be had.
public struct ThumbnailError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// The list's thumbnails, made once per picture and kept in the gallery's own folder
/// (`gallery.cache`, `/var/cache/photobooth-gallery`): the picture decoded at 1/2, 1/4 or 1/8
/// by TurboJPEG's scaled IDCT (``JPEGDecoder/decodeRGB(_:scale:)``: the smallest scale whose long side is
/// still ``minimumLongSide`` pixels or more, so a 12 MP picture decodes straight to 500x375),
/// turned upright by its EXIF Orientation, and encoded again at quality ``quality`` with no
/// metadata at all. A cached file is named after the picture's token and size
/// (`TOKEN-SIZEHEX.jpg`): another photo under the same name gets another thumbnail; the folder may
/// be emptied at any time. A picture taken down loses its thumbnail (``sweep(when:served:)``). The
/// picture is read through ``BeneathFile``: never from outside `storage.dir` or through a symbolic
/// link.
///
/// Blocking (a file read, a decode of a few to 100 ms, a write): called on the gallery's request
/// threads, never the cooperative pool.
public final class Thumbnails: Sendable {
    /// The long side a thumbnail has at least, in pixels (when the picture has it).
    public static let minimumLongSide = 320
    /// The thumbnails' JPEG quality.
    public static let quality = 80
    /// The cache folder.
    public let directory: String
    private let made = Mutex(0)
    /// Pictures TurboJPEG could not decode, by cached name, with why: not read and decoded again at
    /// every request of the list (at most ``maxRemembered`` kept; the file's size is in the name, so
    /// another file under the same path is tried afresh).
    private let undecodable = Mutex<[String: String]>([:])
    static let maxRemembered = 1024

    public init(directory: String) {
        self.directory = directory
    }

    /// Makes the cache folder (mode 0700) when it is missing.
    /// - Throws: ``FileError`` from `mkdir`.
    public func prepare() throws(FileError) {
        try makeDirectories(directory)
    }

    /// Thumbnails made since start (tests, the log).
    public var madeCount: Int { made.withLock { $0 } }

    /// The cached file of `picture`'s thumbnail, made first when missing from its file, `picture.path`
    /// under `photosDir` (``BeneathFile/read(_:under:limit:)``: no symbolic link on the way). Only
    /// while that file is there as indexed (``BeneathFile/open(_:under:way:)``, its size): a picture
    /// deleted by hand, made a link or replaced loses its cached thumbnail, as its page is not answered.
    /// `stillServed` is asked once a new thumbnail is written: false (the picture taken down meanwhile,
    /// after the list's ``sweep(when:served:)`` looked) deletes it again.
    /// - Throws: ``ThumbnailError`` naming the file: unreadable (a symbolic link, gone), of another
    ///   size than indexed, not a JPEG TurboJPEG decodes, or the cache not writable.
    public func file(for picture: IndexedPicture, under photosDir: String, stillServed: () -> Bool = { true }) throws(ThumbnailError) -> String {
        let path = "\(directory)/\(picture.token)-\(String(picture.bytes, radix: 16)).jpg"
        let source = "\(photosDir)/\(picture.path)"
        if let why = undecodable.withLock({ $0[path] }) { throw ThumbnailError(why) }
        let size: Int64
        do {
            let (fd, st) = try BeneathFile.open(picture.path, under: photosDir)
            close(fd)
            size = Int64(st.st_size)
        } catch {
            // Gone, a link, not a file: its thumbnail goes too (made again should the file come back).
            if [ENOENT, ENOTDIR, ELOOP, EXDEV, EINVAL].contains(error.errno) { unlink(path) }
            throw ThumbnailError("\(error)")
        }
        guard size == picture.bytes else {
            unlink(path)
            throw ThumbnailError("\(source) has \(size) bytes, indexed with \(picture.bytes)")
        }
        if access(path, R_OK) == 0 { return path }
        let jpeg: [UInt8]
        do {
            jpeg = try BeneathFile.read(picture.path, under: photosDir, limit: Int(clamping: max(0, picture.bytes)))
        } catch where error.errno == EFBIG {
            throw ThumbnailError("\(source) is larger than the \(picture.bytes) bytes it is indexed with")
        } catch {
            throw ThumbnailError("\(error)")
        }
        guard Int64(jpeg.count) == picture.bytes else {
            throw ThumbnailError("\(source) has \(jpeg.count) bytes, indexed with \(picture.bytes)")
        }
        let small: [UInt8]
        do {
            small = try Thumbnails.make(jpeg)
        } catch {
            let why = "\(source): \(error)"
            undecodable.withLock { u in
                if u.count >= Thumbnails.maxRemembered { u.removeAll() }
                u[path] = why
            }
            throw ThumbnailError(why)
        }
        do {
            // Not durable: a thumbnail lost at a power cut is made again.
            try AtomicFile.write(small, to: path, durable: false, replace: true, mode: 0o600)
        } catch {
            throw ThumbnailError("thumbnail \(path): \(error) (gallery.cache = \(directory) must be the gallery's to write)")
        }
        made.withLock { $0 += 1 }
        // Taken down while it was made: a sweep then may have looked already, and would not look again.
        guard stillServed() else {
            unlink(path)
            throw ThumbnailError("\(source) was taken down while its thumbnail was made; not kept")
        }
        return path
    }

    /// Deletes the cached thumbnails of pictures no longer served: each `TOKEN-SIZEHEX.jpg` whose
    /// token `served` answers false for (taken down, or gone from the index); kept when it answers
    /// nil (the index could not be read), and then the next call sweeps again whatever its `key`. Only when `key` (what the caller saw change: the index's
    /// count of pictures taken down) differs from the last sweep's: a sweep at every list load costs
    /// the caller's count and a comparison until a picture is taken down. Lists the folder once (`readdir`) and
    /// looks at most ``maxSwept`` files; `unlink` each.
    /// - Returns: the thumbnails deleted.
    @discardableResult
    public func sweep(when key: [Int], served: (String) -> Bool?) -> Int {
        let changed = sweptFor.withLock { last -> Bool in
            defer { last = key }
            return last != key
        }
        guard changed else { return 0 }
        var deleted = 0, unsure = false
        for name in listDirectory(directory).prefix(Thumbnails.maxSwept) where name.hasSuffix(".jpg") {
            guard let dash = name.firstIndex(of: "-") else { continue }
            let token = String(name[..<dash])
            guard PictureTokens.isWellFormed(token) else { continue }
            switch served(token) {
            case false?: if unlink("\(directory)/\(name)") == 0 { deleted += 1 }
            case true?: break
            case nil: unsure = true
            }
        }
        // A thumbnail kept only because the index could not be read: the next call looks again.
        if unsure { sweptFor.withLock { last in if last == key { last = nil } } }
        return deleted
    }

    /// Files a sweep looks at, at most.
    public static let maxSwept = 100_000
    private let sweptFor = Mutex<[Int]?>(nil)

    /// The TurboJPEG scale for a picture of `size`: the smallest whose long side stays at
    /// `minimumLongSide` or above (`.full` for a picture already smaller).
    public static func scale(for size: FrameSize, minimumLongSide: Int = Thumbnails.minimumLongSide) -> JPEGScale {
        var chosen = JPEGScale.full
        for s in [JPEGScale.half, .quarter, .eighth] {
            let scaled = s.scaled(size)
            if max(scaled.width, scaled.height) >= minimumLongSide { chosen = s }
        }
        return chosen
    }

    /// A thumbnail of `jpeg`: decoded at ``scale(for:minimumLongSide:)``, upright, encoded at
    /// ``quality`` (JFIF, 4:2:0, no Exif).
    /// - Throws: `TurboJPEGError` for a JPEG TurboJPEG cannot decode, `JPEGFrameError` from the encoder.
    public static func make(_ jpeg: [UInt8]) throws -> [UInt8] {
        let decoder = try JPEGDecoder()
        let header = try decoder.header(jpeg)
        let rgb = try decoder.decodeRGB(jpeg, scale: scale(for: header.size))
        let upright = EXIFOrientation.read(jpeg).upright(rgb)
        let frame = Frame(format: .rgb24, size: upright.size, bytesPerLine: upright.bytesPerLine, bytes: upright.bytes,
                          timestamp: MonotonicInstant(nanoseconds: 0), sequence: 0)
        return try JPEGEncoder().encode(frame, quality: quality)
    }
}

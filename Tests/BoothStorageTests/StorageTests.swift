import BoothClock
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothStorage

@Suite struct AtomicFileTests {
    @Test func writesWholeFileAndLeavesNoTemp() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let bytes = (0..<100_000).map { UInt8($0 % 251) }
        try AtomicFile.write(bytes, to: "\(dir)/a.jpg")
        #expect(try AtomicFile.read("\(dir)/a.jpg") == bytes)
        #expect(listDirectory(dir) == ["a.jpg"])
    }

    @Test func neverOverwritesWithoutReplace() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write([1, 2, 3], to: "\(dir)/a.jpg")
        #expect(throws: FileError.self) { try AtomicFile.write([9], to: "\(dir)/a.jpg") }
        do {
            try AtomicFile.write([9], to: "\(dir)/a.jpg")
        } catch {
            #expect(error.errno == EEXIST)
            #expect(error.call == "renameat2" || error.call == "link")
        }
        #expect(try AtomicFile.read("\(dir)/a.jpg") == [1, 2, 3])
        #expect(listDirectory(dir) == ["a.jpg"], "the temp file is removed after a refused rename")
    }

    @Test func replaceOverwrites() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write([1], to: "\(dir)/p.jpg", durable: false, replace: true)
        try AtomicFile.write([2], to: "\(dir)/p.jpg", durable: false, replace: true)
        #expect(try AtomicFile.read("\(dir)/p.jpg") == [2])
    }

    @Test func errorNamesCallAndPath() {
        do {
            try AtomicFile.write([1], to: "/nonexistent-dir-photobooth/x.jpg")
            Issue.record("expected an error")
        } catch {
            #expect(error.call == "open")
            #expect(error.errno == ENOENT)
            #expect(error.description.contains("/nonexistent-dir-photobooth/"))
        }
    }

    @Test func leftoverTempsAreRemoved() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try AtomicFile.write([1], to: "\(dir)/\(AtomicFile.tempPrefix)booth-000001-1.jpg.123", replace: true)
        try AtomicFile.write([1], to: "\(dir)/keep.jpg")
        #expect(AtomicFile.sweepLeftoverTemps(in: dir, fileSystem: .journaled("ext4")).removed == ["\(AtomicFile.tempPrefix)booth-000001-1.jpg.123"])
        #expect(listDirectory(dir) == ["keep.jpg"])
    }

    @Test("the temps of one file are removed, other files' temps and look-alikes are not")
    func leftoverTempsOfOneFileAreRemoved() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let p = AtomicFile.tempPrefix
        for name in ["\(p)print-journal.json.41", "\(p)print-journal.json.7", "\(p)print-journal.json.x",
                     "\(p)print-journal.json.", "\(p)other.json.41", "print-journal.json"] {
            try AtomicFile.write([1], to: "\(dir)/\(name)", durable: false, replace: true)
        }
        #expect(Set(AtomicFile.sweepLeftoverTemps(of: "\(dir)/print-journal.json", fileSystem: .journaled("ext4")).removed)
                == ["\(p)print-journal.json.41", "\(p)print-journal.json.7"])
        #expect(Set(listDirectory(dir)) == ["\(p)print-journal.json.x", "\(p)print-journal.json.", "\(p)other.json.41",
                                            "print-journal.json"])
    }
}

@Suite struct PowerCutTempTests {
    @Test("on vfat and exFAT every leftover temp is kept as .kept-* (its clusters may be half written or shared); elsewhere removed")
    func fatKeepsATempThatSharesItsFilesData() throws {
        for fs in [FileSystemKind.fat("vfat"), .fat("exfat"), .journaled("ext4")] {
            let dir = makeTempDir(); defer { removeTree(dir) }
            let p = AtomicFile.tempPrefix
            let photo: [UInt8] = [0xFF, 0xD8, 1, 2, 3, 0xFF, 0xD9]
            try AtomicFile.write(photo, to: "\(dir)/booth-000007-1.jpg")
            try AtomicFile.write(photo, to: "\(dir)/\(p)booth-000007-1.jpg.311", durable: false, replace: true)   // cross-linked
            try AtomicFile.write([0xFF, 0xD8], to: "\(dir)/\(p)booth-000008-1.jpg.311", durable: false, replace: true)  // never renamed
            try AtomicFile.write([1, 2], to: "\(dir)/stats.json")
            try AtomicFile.write([1, 2, 3], to: "\(dir)/\(p)stats.json.9", durable: false, replace: true)            // a newer version
            let swept = AtomicFile.sweepLeftoverTemps(in: dir, fileSystem: fs)
            if fs.isFAT {
                let k = AtomicFile.keptPrefix
                #expect(Set(swept.kept) == ["\(k)booth-000007-1.jpg.311", "\(k)booth-000008-1.jpg.311", "\(k)stats.json.9"], "\(fs.name)")
                #expect(swept.removed.isEmpty)
                #expect(access("\(dir)/\(k)booth-000007-1.jpg.311", F_OK) == 0)
                #expect(AtomicFile.sweepLeftoverTemps(in: dir, fileSystem: fs) == .init(), "a kept temp is not swept again")
            } else {
                #expect(swept.kept.isEmpty)
                #expect(swept.removed.count == 3)
            }
            #expect(try AtomicFile.read("\(dir)/booth-000007-1.jpg") == photo)
        }
    }

    @Test("on vfat a photo file left empty by a cut is removed at start, its number still counted; status notes say what happened")
    func fatStartRemovesEmptyPhotosAndSaysSo() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try makeDirectories("\(dir)/2026-12-02")
        try AtomicFile.write([0xFF, 0xD8, 0xFF, 0xD9], to: "\(dir)/2026-12-02/booth-000004-1.jpg")
        try AtomicFile.write([], to: "\(dir)/2026-12-02/booth-000005-1.jpg")
        try AtomicFile.write([0xFF, 0xD8, 0xFF, 0xD9], to: "\(dir)/2026-12-02/\(AtomicFile.tempPrefix)booth-000004-1.jpg.77",
                             durable: false, replace: true)
        let fat = PhotoStore(directory: dir, dateFolder: { "2026-12-02" }, fileSystemOf: { _ in .fat("vfat") })
        try fat.prepare()
        #expect(fat.nextSession == 6, "the empty file's number is not handed out again")
        #expect(Set(listDirectory("\(dir)/2026-12-02")) == ["booth-000004-1.jpg", "\(AtomicFile.keptPrefix)booth-000004-1.jpg.77"])
        let notes = fat.powerCutNotes
        #expect(notes.count == 3)
        #expect(notes[0].contains("on vfat, which has no journal"))
        #expect(notes.contains { $0.contains("\(AtomicFile.keptPrefix)booth-000004-1.jpg.77: a save a crash or power cut interrupted, kept") })
        #expect(notes.contains { $0.contains("booth-000005-1.jpg was empty") })
        // ext4: an empty photo file is left alone (it cannot come from a cut there) and nothing is said.
        try AtomicFile.write([], to: "\(dir)/2026-12-02/booth-000006-1.jpg")
        let ext4 = PhotoStore(directory: dir, dateFolder: { "2026-12-02" }, fileSystemOf: { _ in .journaled("ext4") })
        try ext4.prepare()
        #expect(ext4.powerCutNotes.isEmpty)
        #expect(access("\(dir)/2026-12-02/booth-000006-1.jpg", F_OK) == 0)
    }

    @Test("this run's own temps (writes in progress) are never swept, an earlier boot's with the same pid are; a kept name in use gets a number")
    func ownTempsStayAndKeptNamesDoNotCollide() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let p = AtomicFile.tempPrefix, k = AtomicFile.keptPrefix
        let own = "\(p).photobooth-stats.json.\(AtomicFile.processTag)"
        try AtomicFile.write([1], to: "\(dir)/\(own)", durable: false, replace: true)
        // An earlier boot's daemon with this very pid: its temp is no write of this run, and is swept.
        let samePid = "\(p).photobooth-stats.json.\(getpid())"
        try AtomicFile.write([1], to: "\(dir)/\(samePid)", durable: false, replace: true)
        try AtomicFile.write([2], to: "\(dir)/\(p)a.jpg.12", durable: false, replace: true)
        try AtomicFile.write([3], to: "\(dir)/\(k)a.jpg.12", durable: false, replace: true)   // kept at an earlier boot
        let fat = AtomicFile.sweepLeftoverTemps(in: dir, fileSystem: .fat("vfat"))
        #expect(Set(fat.kept) == ["\(k)a.jpg.12.2", "\(k).photobooth-stats.json.\(getpid())"])
        #expect(try AtomicFile.read("\(dir)/\(k)a.jpg.12") == [3], "the earlier kept file is untouched")
        #expect(access("\(dir)/\(own)", F_OK) == 0)
        #expect(AtomicFile.sweepLeftoverTemps(in: dir, fileSystem: .journaled("ext4")).removed.isEmpty, "own temp left on ext4 too")
        #expect(access("\(dir)/\(own)", F_OK) == 0)
    }

    @Test("replacing a file: the new bytes are in place and the old file is released (nothing left open)")
    func replaceReleasesTheOldFile() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        for i in 0..<5 { try AtomicFile.write([UInt8(i)], to: "\(dir)/state.json", replace: true) }
        #expect(try AtomicFile.read("\(dir)/state.json") == [4])
        // No descriptor of this process still names a file of `dir` (an old version held open would show
        // as ".../state.json (deleted)"); other tests' descriptors name other directories.
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
        }.filter { $0.hasPrefix(dir + "/") }
        #expect(held.isEmpty, "\(held)")
        #expect(listDirectory(dir) == ["state.json"])
    }

    @Test("statfs magic numbers name the file system; only journaled ones need no power-cut note")
    func fileSystemKinds() {
        #expect(FileSystemKind.kind(fType: 0xEF53) == .journaled("ext4"))
        #expect(FileSystemKind.kind(fType: 0x4D44) == .fat("vfat"))
        #expect(FileSystemKind.kind(fType: 0x2011_BAB0) == .fat("exfat"))
        #expect(FileSystemKind.kind(fType: 0x0102_1994) == .memory("tmpfs"))
        #expect(FileSystemKind.kind(fType: 0x1234) == .other("0x1234"))
        #expect(FileSystemKind.journaled("ext4").powerCutNote(dir: "/p") == nil)
        let note = FileSystemKind.fat("vfat").powerCutNote(dir: "/media/stick/photos") ?? ""
        #expect(note.contains("/media/stick/photos") && note.contains("no journal") && note.contains("fsck.vfat -a"))
        #expect(FileSystemKind.fat("exfat").powerCutNote(dir: "/p")?.contains("fsck.exfat -a") == true)
        #expect(FileSystemKind.memory("tmpfs").powerCutNote(dir: "/p")?.contains("lost at a power cut") == true)
        #expect(FileSystemKind.of("/proc") == .other("0x9fa0"), "procfs is none the booth knows")
    }
}

@Suite struct PhotoStoreTests {
    @Test func sessionNumbersContinueFromTheFilesAcrossDays() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        try makeDirectories("\(dir)/2026-11-27")
        try makeDirectories("\(dir)/2026-11-28")
        try AtomicFile.write([1], to: "\(dir)/2026-11-27/booth-000041-1.jpg")
        try AtomicFile.write([1], to: "\(dir)/2026-11-28/booth-000007-1.jpg")
        try AtomicFile.write([1], to: "\(dir)/2026-11-28/notes.txt")
        try AtomicFile.write([1], to: "\(dir)/2026-11-28/\(AtomicFile.tempPrefix)booth-000099-1.jpg.5", replace: true)
        let store = PhotoStore(directory: dir, dateFolder: { "2026-11-29" })
        try store.prepare()
        #expect(store.nextSession == 42, "the highest number in any date folder wins; temp files do not count")
        #expect(!listDirectory("\(dir)/2026-11-28").contains { $0.hasPrefix(AtomicFile.tempPrefix) })
        let n = store.allocateSession()
        #expect(n == 42)
        let path = try store.saveCapture([0xFF, 0xD8, 0xFF, 0xD9], session: n, shot: 1)
        #expect(path == "\(dir)/2026-11-29/booth-000042-1.jpg")
        #expect(store.allocateSession() == 43)
    }

    @Test func existingNameMovesToTheNextNumber() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let store = PhotoStore(directory: dir, dateFolder: { "2026-11-29" })
        try store.prepare()
        try makeDirectories("\(dir)/2026-11-29")
        // A file appears after prepare() (another process, a copied card): it is never overwritten.
        try AtomicFile.write([7], to: "\(dir)/2026-11-29/booth-000001-1.jpg")
        let path = try store.saveCapture([1, 2], session: 1, shot: 1)
        #expect(path == "\(dir)/2026-11-29/booth-000002-1.jpg")
        #expect(try AtomicFile.read("\(dir)/2026-11-29/booth-000001-1.jpg") == [7])
        #expect(store.nextSession == 3)
    }

    @Test func unwritableDirectoryIsReported() {
        let store = PhotoStore(directory: "/proc/photobooth-cannot-exist")
        #expect(throws: FileError.self) { try store.prepare() }
    }

    @Test func fileNameParsing() {
        #expect(PhotoStore.sessionNumber(inFileName: "booth-000123-2.jpg") == 123)
        #expect(PhotoStore.sessionNumber(inFileName: "booth-000123-picture.jpg") == 123)
        #expect(PhotoStore.sessionNumber(inFileName: "booth--1.jpg") == nil)
        #expect(PhotoStore.sessionNumber(inFileName: "photo-000123-1.jpg") == nil)
        #expect(PhotoStore.sessionNumber(inFileName: "booth-12a-1.jpg") == nil)
        // Not one of ours, and it must not make the next session number overflow.
        #expect(PhotoStore.sessionNumber(inFileName: "booth-9223372036854775807-1.jpg") == nil)
        #expect(PhotoStore.sessionNumber(inFileName: "booth-999999999-1.jpg") == 999_999_999)
        #expect(PhotoStore.isDateFolder("2026-11-29"))
        #expect(!PhotoStore.isDateFolder("2026-1-29x"))
    }

    @Test func bytesFormatting() {
        #expect(formatBytes(500_000_000) == "500 MB")
        #expect(formatBytes(1_500_000_000) == "1.5 GB")
        #expect(formatBytes(999) == "999 B")
    }
}

/// A directory fsync that fails its first `failures` calls with EIO; counts calls.
private final class FailingDirectorySync: Sendable {
    private let calls = Mutex(0)
    private let failures: Int
    init(failures: Int) { self.failures = failures }
    var count: Int { calls.withLock { $0 } }
    func sync(_ dir: String) throws(FileError) {
        let n = calls.withLock { $0 += 1; return $0 }
        if n <= failures { throw FileError(call: "fsync", errno: EIO, path: dir) }
    }
}

@Suite struct DirectorySyncAfterRenameTests {
    @Test func fileInPlaceWithUnconfirmedDirectoryIsReturnedNotThrown() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let sync = FailingDirectorySync(failures: 1)
        let unsynced = try AtomicFile.write([1, 2, 3], to: "\(dir)/a.jpg", syncDirectory: sync.sync)
        #expect(unsynced == FileError(call: "fsync", errno: EIO, path: dir))
        #expect(sync.count == 1, "not retried: a second fsync's success would not prove the entry durable")
        #expect(try AtomicFile.read("\(dir)/a.jpg") == [1, 2, 3])
        #expect(listDirectory(dir) == ["a.jpg"])
        let sync2 = FailingDirectorySync(failures: 0)
        #expect(try AtomicFile.write([4], to: "\(dir)/b.jpg", syncDirectory: sync2.sync) == nil)
        #expect(sync2.count == 1)
    }

    @Test("replacing a file: a failed directory fsync after the rename throws (writing again is harmless)")
    func replacingThrowsAFailedDirectorySync() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let sync = FailingDirectorySync(failures: 1)
        #expect(throws: FileError(call: "fsync", errno: EIO, path: dir)) {
            try AtomicFile.write([1, 2], to: "\(dir)/journal.json", replace: true, syncDirectory: sync.sync)
        }
        #expect(try AtomicFile.read("\(dir)/journal.json") == [1, 2], "the new content is in place all the same")
        #expect(listDirectory(dir) == ["journal.json"], "no temp file left")
    }
}

@Suite struct SessionNumberTests {
    @Test("a session none of whose files were saved (a full disk) keeps its number: the next start does not hand it out again")
    func unsavedSessionNumberIsNotReused() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let store = PhotoStore(directory: dir, dateFolder: { "2026-11-29" })
        try store.prepare()
        let first = store.allocateSession()
        _ = try store.saveCapture([0xFF, 0xD8, 0xFF, 0xD9], session: first, shot: 1)
        let unsaved = store.allocateSession()
        #expect(unsaved == first + 1)
        // Its captures were never written (no space); the daemon restarts.
        let again = PhotoStore(directory: dir, dateFolder: { "2026-11-29" })
        try again.prepare()
        #expect(again.sessionFileProblem == nil)
        #expect(again.allocateSession() == unsaved + 1, "session \(unsaved) was handed out twice")
    }

    @Test func sessionFileParsing() {
        #expect(PhotoStore.parseSessionFile(Array("000000000000042\n".utf8)) == 42)
        #expect(PhotoStore.parseSessionFile(Array("000000000000000\n".utf8)) == 0)
        #expect(PhotoStore.parseSessionFile(Array("9223372036854775807\n".utf8)) == nil)
        #expect(PhotoStore.parseSessionFile(Array("garbage".utf8)) == nil)
    }
}

/// A new `storage.dir` at runtime (``PhotoStorage/switchDirectory(to:mount:)``): checked as at start,
/// refused with the reason and the old directory kept, and session numbers never repeat across the two.
@Suite struct StorageDirectorySwitchTests {
    @Test("the next session is max(the old directory's next, the new one's); the next photo goes to the new directory")
    func numbersNeverRepeatAcrossTheTwoDirectories() throws {
        let root = makeTempDir(); defer { removeTree(root) }
        let store = PhotoStore(directory: "\(root)/old", dateFolder: { "2026-11-29" })
        try store.prepare()
        for _ in 1...4 { _ = store.allocateSession() }
        _ = try store.saveCapture([1], session: 4, shot: 1)
        #expect(store.nextSession == 5)

        // A new directory with lower numbers: counting goes on from the old one.
        try makeDirectories("\(root)/low/2026-11-20")
        try AtomicFile.write([1], to: "\(root)/low/2026-11-20/booth-000002-1.jpg")
        #expect(try store.switchDirectory(to: "\(root)/low", mount: "") == 5)
        #expect(store.directory == "\(root)/low")
        let n = store.allocateSession()
        #expect(n == 5)
        #expect(try store.saveCapture([2], session: n, shot: 1) == "\(root)/low/2026-11-29/booth-000005-1.jpg")
        #expect(try AtomicFile.read("\(root)/low/\(PhotoStore.sessionFileName)").starts(with: Array("000000000000005".utf8)),
                "the number handed out is recorded in the new directory")

        // A directory with higher numbers (a card from another booth, or one used before): its own count wins.
        try makeDirectories("\(root)/high/2026-11-21")
        try AtomicFile.write([1], to: "\(root)/high/2026-11-21/booth-000040-picture.jpg")
        #expect(try store.switchDirectory(to: "\(root)/high", mount: "") == 41)
        #expect(store.allocateSession() == 41)

        // Back to a directory whose numbers were handed out (its session file says 5): no repeat either.
        #expect(try store.switchDirectory(to: "\(root)/low", mount: "") == 42)
    }

    @Test("a directory that cannot be written, or removable media not mounted: refused, the old directory stays")
    func refusedSwitchKeepsTheOldDirectory() throws {
        let root = makeTempDir(); defer { removeTree(root) }
        let store = PhotoStore(directory: "\(root)/old", dateFolder: { "2026-11-29" })
        try store.prepare()
        _ = store.allocateSession()

        var refusal: StorageRefusal?
        do { try store.switchDirectory(to: "/proc/photobooth-cannot-exist", mount: "") } catch { refusal = error }
        #expect(refusal?.message.contains("storage.dir /proc/photobooth-cannot-exist not used: photos directory not writable") == true,
                "\(refusal?.message ?? "not refused")")
        #expect(refusal?.message.hasSuffix("photos stay in \(root)/old") == true)
        #expect(store.directory == "\(root)/old")

        // storage.mount names a mount point with nothing mounted on it (an empty directory on the SD card).
        try makeDirectories("\(root)/media")
        refusal = nil
        do { try store.switchDirectory(to: "\(root)/media/photos", mount: "\(root)/media") } catch { refusal = error }
        #expect(refusal?.message.contains("removable media not mounted at \(root)/media") == true, "\(refusal?.message ?? "not refused")")
        #expect(!FileManager.default.fileExists(atPath: "\(root)/media/photos"), "nothing is written to the SD card")
        #expect(store.directory == "\(root)/old")
        #expect(store.nextSession == 2)
        #expect(try store.saveCapture([3], session: 1, shot: 1) == "\(root)/old/2026-11-29/booth-000001-1.jpg")
    }
}

import BoothIndex
import BoothPorts
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothGallery

@Suite("IndexFile: a reader follows the file photoboothd made again")
struct IndexFileTests {
    @Test("a file deleted between its open and the reader's first look (no identity known): the next file at the path is read once made")
    func followsAfterAnUnknownFirstIdentity() throws {
        var template = Array("/tmp/photobooth-indexfile-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/index.sqlite"
        _ = try PictureIndex(path: path).counts()
        let opened = try PictureIndex(path: path, readOnly: true)
        try #require(unlink(path) == 0)  // deleted before the reader first looks at the path
        let clock = Mutex<Int64>(0)
        let file = IndexFile(opened, log: LogRecorder().logger(), who: "test", nowMilliseconds: { clock.withLock { $0 } })

        // photoboothd makes it again, with a picture.
        let made = try PictureIndex(path: path)
        try made.record(IndexedPicture(token: String(repeating: "c", count: 26), path: "2026-12-01/booth-000001-picture.jpg", session: 1,
                                       savedAt: 1, bytes: 5))
        clock.withLock { $0 = 2_000 }
        let (index, generation) = file.currentAndGeneration()
        #expect(generation == 1, "still reading the deleted file")
        #expect(try index.counts().served == 1)
    }

    @Test("a file renamed over the index, seen by the reader before photoboothd (another process) made it again: the reader follows the remade file, not the old file's log")
    func followsTheRemakeAfterARenameOver() throws {
        var template = Array("/tmp/photobooth-indexfile-XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/index.sqlite"
        let daemon = try PictureIndex(path: path)
        for n in 10..<30 {
            try daemon.record(IndexedPicture(token: String(repeating: "d", count: 24) + "\(n)", path: "2026-12-01/booth-0000\(n)-picture.jpg",
                                             session: n, savedAt: 1, bytes: 5))
        }
        let clock = Mutex<Int64>(0)
        let log = LogRecorder()
        let file = IndexFile(try PictureIndex(path: path, readOnly: true), log: log.logger(), who: "test",
                             nowMilliseconds: { clock.withLock { $0 } })
        #expect(try file.current().counts().served == 20)
        // Another (empty) index renamed over it; the reader looks first.
        do { _ = try PictureIndex(path: "\(dir)/other.sqlite").counts() }
        for suffix in ["-wal", "-shm"] { unlink("\(dir)/other.sqlite" + suffix) }
        try #require(rename("\(dir)/other.sqlite", path) == 0)
        clock.withLock { $0 = 2_000 }
        #expect(try file.current().counts().served == 20, "the old file read until photoboothd has made the new one")
        // photoboothd's remake, in a process of its own: the old file's -wal and -shm removed, the new file opened
        // (new ones made) and a picture recorded; its connection stays open, as the daemon's does.
        let remake = Process()
        remake.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        remake.arguments = ["-c", """
            import os, sqlite3, sys
            p = sys.argv[1]
            for s in ("-wal", "-shm"):
                try: os.unlink(p + s)
                except FileNotFoundError: pass
            c = sqlite3.connect(p)
            c.execute("PRAGMA journal_mode = WAL")
            c.execute("INSERT INTO pictures (token, path, session, shot, saved_at, bytes) VALUES ('eeeeeeeeeeeeeeeeeeeeeeeeee', '2026-12-01/booth-000040-picture.jpg', 40, 0, 1, 5)")
            c.commit()
            print("ok", flush=True)
            sys.stdin.read()
            """, path]
        let input = Pipe(), output = Pipe()
        remake.standardInput = input
        remake.standardOutput = output
        try remake.run()
        defer { try? input.fileHandleForWriting.close(); remake.waitUntilExit() }
        let said = String(decoding: output.fileHandleForReading.readData(ofLength: 3), as: UTF8.self)
        try #require(said.hasPrefix("ok"), "the remake process: \(said)")
        clock.withLock { $0 = 4_000 }
        let served = try? file.current().counts().served
        #expect(served == 1, "the reader still reads the new file through the old file's log: \(String(describing: served)) \(log.all)")
    }
}

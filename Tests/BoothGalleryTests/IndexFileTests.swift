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
}

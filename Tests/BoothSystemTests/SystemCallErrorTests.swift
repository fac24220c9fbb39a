import BoothSystem
import Glibc
import Testing

@Suite struct SystemCallErrorTests {
    @Test("names the call, the errno by number, symbol and strerror's words, and the subject")
    func words() {
        let e = SystemCallError(call: "open", errno: ENOENT, subject: "/srv/photos/x.jpg")
        #expect(e.description == "/srv/photos/x.jpg: open failed: No such file or directory (errno 2, ENOENT)")
        #expect(e.errnoName == "ENOENT")
        #expect(e.reason == "No such file or directory")
        #expect(SystemCallError(call: "VIDIOC_S_FMT", errno: EINVAL, subject: "/dev/video0").description
                == "/dev/video0: VIDIOC_S_FMT failed: Invalid argument (errno 22, EINVAL)")
        #expect(SystemCallError(call: "poll", errno: EINTR, subject: "").description == "poll failed: Interrupted system call (errno 4, EINTR)")
    }

    @Test("an errno glibc has no name for is shown by its number")
    func unknownErrno() {
        #expect(SystemCallError.name(of: 9999) == "errno 9999")
        #expect(SystemCallError.text(of: 9999).contains("errno 9999"))
    }

    @Test("the storage port's words: path and a full file system")
    func storageWords() {
        var e = SystemCallError(call: "write", errno: ENOSPC, path: "/a")
        #expect(e.path == "/a" && e.subject == "/a" && e.isNoSpace)
        e.errno = EDQUOT
        #expect(e.isNoSpace)
        e.errno = EIO
        #expect(!e.isNoSpace)
    }

    @Test("last(_:_:) reads the calling thread's errno")
    func last() {
        #expect(open("/nonexistent/booth-test", O_RDONLY) == -1)
        let e = SystemCallError.last("open", "/nonexistent/booth-test")
        #expect(e.errno == ENOENT && e.call == "open" && e.subject == "/nonexistent/booth-test")
    }
}

@Suite struct TimeTextTests {
    @Test("UTC and HTTP dates from seconds since 1970")
    func utc() {
        #expect(TimeText.utc(1_796_126_645) == "2026-12-01 12:04:05 UTC")
        #expect(TimeText.http(1_796_126_645) == "Tue, 01 Dec 2026 12:04:05 GMT")
        #expect(TimeText.format(0, "%Y", in: .utc) == "1970")
    }

    @Test("local time follows TZ")
    func local() {
        let old = getenv("TZ").map { String(cString: $0) }
        setenv("TZ", "UTC", 1); tzset()
        defer { if let old { setenv("TZ", old, 1) } else { unsetenv("TZ") }; tzset() }
        #expect(TimeText.local(1_796_126_645) == "2026-12-01 12:04:05")
    }
}

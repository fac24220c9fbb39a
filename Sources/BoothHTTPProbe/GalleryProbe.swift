import CCurl
import Glibc

/// Asks a running photobooth-gallery whether it answers: one `GET /health` through libcurl
/// (`curl_easy_perform`, no proxy, no redirects), for `photoboothctl status` and `gallery status`.
/// Blocks the calling thread up to `timeoutMilliseconds`: call it from a command-line tool's own
/// thread, never from a server's or the cooperative pool.
public enum GalleryProbe {
    /// What `/health` said.
    public enum Answer: Sendable, Equatable {
        /// 200, with its body (`ok 12 pictures`).
        case answers(String)
        /// Another status, with its body.
        case status(Int, String)
        /// No answer: libcurl's reason (`Couldn't connect to server`, `Timeout was reached`).
        case noAnswer(String)
    }

    /// The URL to ask for a gallery listening on `listen`:`port`: `0.0.0.0` is asked at 127.0.0.1.
    public static func healthURL(listen: String, port: Int) -> String {
        "http://\(listen == "0.0.0.0" ? "127.0.0.1" : listen):\(port)/health"
    }

    /// `GET url`; the body is read up to 4 KiB.
    public static func ask(_ url: String, timeoutMilliseconds: Int = 2000) -> Answer {
        guard let curl = curl_easy_init() else { return .noAnswer("libcurl could not be set up") }
        defer { curl_easy_cleanup(curl) }
        final class Body { var bytes: [UInt8] = [] }
        let body = Body()
        let context = Unmanaged.passUnretained(body).toOpaque()
        _ = pb_curl_set_string(curl, CURLOPT_URL, url)
        _ = pb_curl_set_long(curl, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = pb_curl_set_long(curl, CURLOPT_NOSIGNAL, 1)
        _ = pb_curl_set_string(curl, CURLOPT_NOPROXY, "*")
        _ = pb_curl_set_long(curl, CURLOPT_FOLLOWLOCATION, 0)
        _ = pb_curl_set_pointer(curl, CURLOPT_WRITEDATA, context)
        _ = pb_curl_set_write(curl) { data, size, count, context in
            guard let data, let context else { return 0 }
            let body = Unmanaged<Body>.fromOpaque(context).takeUnretainedValue()
            let n = size * count
            let room = max(0, 4096 - body.bytes.count)
            data.withMemoryRebound(to: UInt8.self, capacity: n) { body.bytes += UnsafeBufferPointer(start: $0, count: min(n, room)) }
            return n
        }
        let rc = withExtendedLifetime(body) { curl_easy_perform(curl) }
        guard rc == CURLE_OK else { return .noAnswer(String(cString: curl_easy_strerror(rc))) }
        var code = 0
        _ = pb_curl_response_code(curl, &code)
        var text = String(decoding: body.bytes, as: UTF8.self)
        while text.hasSuffix("\n") { text.removeLast() }
        return code == 200 ? .answers(text) : .status(code, text)
    }
}

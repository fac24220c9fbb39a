// libFuzzer target: the control socket's request side: the bytes a client sends, split into lines by the
// server's LineReader (read from a socketpair, as from the socket), each line answered by
// ControlServer.answer (JSON decoding, protocol and command checks), and the client's reply decoding.
import BoothCore
import BoothPorts
@testable import BoothControl
import Foundation

let server = ControlServer(path: "/nonexistent/fuzz.sock", log: Logger(threshold: .error) { _ in }) { request, _ in
    ControlReply(result: PrintsReply(message: "\(request.command) \(request.action ?? "") \(request.id ?? 0) \(request.sheets ?? 0)",
                                     requests: [], sheetsRemaining: request.sheets)).line()
}
let peer = PeerCredentials(pid: 1, uid: 0, gid: 0)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControl(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    var fds: [Int32] = [-1, -1]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { fatalError("socketpair failed") }
    defer { close(fds[0]) }
    if !bytes.isEmpty { _ = sendAll(fds[1], bytes) }
    close(fds[1])
    var reader = LineReader(fd: fds[0], limit: 4096)
    loop: while true {
        switch reader.next() {
        case .end, .tooLong: break loop
        case let .line(line):
            let reply = server.answer(line, peer)
            guard reply.last == 0x0A else { fatalError("reply without newline") }
        }
    }
    _ = try? JSONDecoder().decode(ControlReply<PrintsReply>.self, from: Data(bytes))
    _ = try? JSONDecoder().decode(ControlReply<StatusReport>.self, from: Data(bytes))
    return 0
}

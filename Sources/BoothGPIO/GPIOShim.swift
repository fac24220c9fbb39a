import BoothButtons
import BoothClock
import BoothCore
// Imported only for its modulemap's `link "gpiod"`: the C shim cannot autolink
// libgpiod itself, and no libgpiod type is used from Swift.
internal import CGPIOD
import BoothSystem
import CGPIODShims
#if canImport(Glibc)
import Glibc
#endif

// The one door to C for BoothGPIO: thin wrappers over CGPIODShims (libgpiod v1
// or v2, chosen at compile time) and the few syscalls the threads need. Every
// failure comes back as errno; EINTR is retried here (BoothSystem's `retryingEINTR`) and nowhere else.

/// Thin wrappers over the C shim. Pointers returned stay owned by the caller.
enum Shim {
    /// 1 or 2: the libgpiod API the shim was compiled against.
    static var apiVersion: Int { Int(pb_gpio_api_version()) }

    /// libgpiod's own name for an operation, for error messages.
    static func callName(_ operation: Operation) -> String {
        let v2 = apiVersion == 2
        switch operation {
        case .openChip: return "gpiod_chip_open"
        case .findLine: return v2 ? "gpiod_chip_get_line_offset_from_name" : "gpiod_chip_find_line"
        case .lineInfo: return v2 ? "gpiod_chip_get_line_info" : "gpiod_line_update"
        case .requestLines: return v2 ? "gpiod_chip_request_lines" : "gpiod_line_request"
        case .readEvents: return v2 ? "gpiod_line_request_read_edge_events" : "gpiod_line_event_read_multiple"
        case .getValue: return v2 ? "gpiod_line_request_get_value" : "gpiod_line_get_value"
        case .setValue: return v2 ? "gpiod_line_request_set_value" : "gpiod_line_set_value"
        case .listChips: return "opendir(/dev)"
        }
    }

    enum Operation { case openChip, findLine, lineInfo, requestLines, readEvents, getValue, setValue, listChips }

    static func openChip(_ spec: String) -> Result<OpaquePointer, Errno> {
        if let chip = pb_gpio_chip_open(spec) { return .success(chip) }
        return .failure(Errno(errno))
    }

    static func chipName(_ chip: OpaquePointer) -> String { String(cString: pb_gpio_chip_name(chip)) }
    static func chipLabel(_ chip: OpaquePointer) -> String { String(cString: pb_gpio_chip_label(chip)) }
    static func chipPath(_ chip: OpaquePointer) -> String { String(cString: pb_gpio_chip_path(chip)) }
    static func chipLineCount(_ chip: OpaquePointer) -> Int { Int(pb_gpio_chip_num_lines(chip)) }

    static func findLine(_ chip: OpaquePointer, name: String) -> Result<UInt32, Errno> {
        let offset = pb_gpio_chip_find_line(chip, name)
        if offset < 0 { return .failure(Errno(errno)) }
        return .success(UInt32(offset))
    }

    static func lineInfo(_ chip: OpaquePointer, offset: UInt32) -> Result<GPIOLineInfo, Errno> {
        var info = pb_gpio_line_info()
        if pb_gpio_chip_line_info(chip, offset, &info) < 0 { return .failure(Errno(errno)) }
        return .success(GPIOLineInfo(offset: info.offset, name: String(cArray: info.name),
                                     consumer: String(cArray: info.consumer), used: info.used,
                                     isOutput: info.output, activeLow: info.active_low))
    }

    static func requestInput(_ chip: OpaquePointer, offset: UInt32, bias: GPIOBias, activeLow: Bool,
                             consumer: String) -> Result<OpaquePointer, Errno> {
        if let line = pb_gpio_request_input(chip, offset, bias.shimValue, activeLow, consumer) { return .success(line) }
        return .failure(Errno(errno))
    }

    static func requestOutput(_ chip: OpaquePointer, offset: UInt32, activeLow: Bool, on: Bool,
                              consumer: String) -> Result<OpaquePointer, Errno> {
        if let line = pb_gpio_request_output(chip, offset, activeLow, on ? 1 : 0, consumer) { return .success(line) }
        return .failure(Errno(errno))
    }

    static func eventFD(_ line: OpaquePointer) -> Int32 { pb_gpio_line_event_fd(line) }

    /// Reads pending edges: [] when none is pending (EAGAIN), errno on failure.
    static func readEdges(_ line: OpaquePointer) -> Result<[ButtonEdge], Errno> {
        var buffer = [pb_gpio_edge_event](repeating: pb_gpio_edge_event(), count: 16)
        let n = buffer.withUnsafeMutableBufferPointer { pb_gpio_line_read_events(line, $0.baseAddress, Int32($0.count)) }
        if n < 0 { return .failure(Errno(errno)) }
        return .success(buffer.prefix(Int(n)).map {
            ButtonEdge(active: $0.edge == Int32(PB_GPIO_EDGE_RISING.rawValue),
                       at: MonotonicInstant(nanoseconds: $0.timestamp_ns),
                       sequence: $0.line_seqno == 0 ? nil : $0.line_seqno)
        })
    }

    /// The logical level: true when active.
    static func value(_ line: OpaquePointer) -> Result<Bool, Errno> {
        let v = pb_gpio_line_get_value(line)
        if v < 0 { return .failure(Errno(errno)) }
        return .success(v == 1)
    }

    static func setValue(_ line: OpaquePointer, on: Bool) -> Result<Void, Errno> {
        if pb_gpio_line_set_value(line, on ? 1 : 0) < 0 { return .failure(Errno(errno)) }
        return .success(())
    }

    static func release(_ line: OpaquePointer) { pb_gpio_line_release(line) }
    static func closeChip(_ chip: OpaquePointer) { pb_gpio_chip_close(chip) }

    /// Device paths of all GPIO chips, in chip-number order.
    static func chipPaths() -> Result<[String], Errno> {
        guard let list = pb_gpio_chip_list_new() else { return .failure(Errno(errno)) }
        defer { pb_gpio_chip_list_free(list) }
        var paths: [String] = []
        for i in 0..<pb_gpio_chip_list_count(list) {
            if let p = pb_gpio_chip_list_path(list, i) { paths.append(String(cString: p)) }
        }
        return .success(paths)
    }

}

/// Syscalls for the owned threads: monotonic clock, wake-up pipe, poll.
enum Sys {
    /// Now on CLOCK_MONOTONIC, the clock of libgpiod's event timestamps.
    static func now() -> MonotonicInstant { Monotonic.now() }

    /// A non-blocking close-on-exec pipe: (read end, write end).
    static func makeWakePipe() -> Result<(Int32, Int32), Errno> {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) < 0 { return .failure(Errno(errno)) }
        for fd in fds where fcntl(fd, F_SETFL, O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 {
            let err = errno
            close(fds[0])
            close(fds[1])
            return .failure(Errno(err))
        }
        return .success((fds[0], fds[1]))
    }

    /// Writes one byte to wake a poller (a full pipe already wakes it).
    static func wake(_ fd: Int32) {
        var byte: UInt8 = 1
        _ = retryingEINTR { write(fd, &byte, 1) }
    }

    /// Empties a non-blocking pipe.
    static func drain(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        while retryingEINTR({ read(fd, &buffer, buffer.count) }) > 0 {}
    }

    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// poll(2) over `fds` for at most `timeoutMilliseconds` (-1: forever).
    /// Returns the revents per fd, or errno. Wraps `poll`.
    static func poll(_ fds: [Int32], timeoutMilliseconds: Int32) -> Result<[Int16], Errno> {
        var pfds = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let n = retryingEINTR { Glibc.poll(&pfds, nfds_t(pfds.count), timeoutMilliseconds) }
        if n < 0 { return .failure(Errno(errno)) }
        return .success(pfds.map(\.revents))
    }
}

/// An errno from a failed C call.
struct Errno: Error, Sendable {
    var code: Int32
    init(_ code: Int32) { self.code = code }
}

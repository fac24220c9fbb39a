import CCUPS
import Glibc

/// The IPP job states (RFC 8011 `job-state`), as libcups reports them (`ipp_jstate_t`).
public enum JobState: String, Codable, Sendable, Equatable {
    case pending, held, processing, stopped, cancelled, aborted, completed

    init?(ipp: ipp_jstate_t) {
        switch ipp {
        case IPP_JSTATE_PENDING: self = .pending
        case IPP_JSTATE_HELD: self = .held
        case IPP_JSTATE_PROCESSING: self = .processing
        case IPP_JSTATE_STOPPED: self = .stopped
        case IPP_JSTATE_CANCELED: self = .cancelled
        case IPP_JSTATE_ABORTED: self = .aborted
        case IPP_JSTATE_COMPLETED: self = .completed
        default: return nil
        }
    }

    /// True for completed, cancelled and aborted: the job will not change again.
    public var isFinal: Bool { self == .completed || self == .cancelled || self == .aborted }
}

/// A job as CUPS lists it (`cupsGetJobs2`).
public struct CUPSJob: Sendable, Equatable {
    /// The job id (`job-id`).
    public var id: Int
    /// `job-state`.
    public var state: JobState
    /// `job-name`, as submitted.
    public var title: String

    public init(id: Int, state: JobState, title: String) {
        self.id = id
        self.state = state
        self.title = title
    }
}

/// A printer's state as IPP Get-Printer-Attributes reports it.
public struct PrinterAttributes: Sendable, Equatable {
    /// `printer-state`: 3 idle, 4 processing, 5 stopped.
    public var state: Int
    /// `printer-state-reasons` keywords (`none` removed), e.g. `["media-empty-error", "media-needed"]`.
    public var reasons: [String]
    /// `printer-is-accepting-jobs` (true when absent).
    public var acceptingJobs: Bool
    /// `printer-state-message`, may be empty.
    public var message: String
    /// `device-uri` (cupsd queues only), e.g. `"ipp://printer.local:631/ipp/print"`.
    public var deviceURI: String?
    /// `media-supported`, when listed.
    public var mediaSupported: [String]

    public init(state: Int, reasons: [String], acceptingJobs: Bool, message: String, deviceURI: String?,
                mediaSupported: [String]) {
        self.state = state
        self.reasons = reasons
        self.acceptingJobs = acceptingJobs
        self.message = message
        self.deviceURI = deviceURI
        self.mediaSupported = mediaSupported
    }
}

/// The one door to libcups: a connection to the CUPS server (`cupsServer()`, i.e. `CUPS_SERVER`,
/// client.conf, or /run/cups/cups.sock) and one destination. Blocking: every method does network
/// I/O with a timeout; call it only from the print worker's thread. Not thread-safe.
public final class CUPSConnection {
    private let http: OpaquePointer
    private var dest: UnsafeMutablePointer<cups_dest_t>
    private var info: OpaquePointer?
    /// The queue asked for; empty = the CUPS default destination.
    public let destination: String
    /// The queue's name as CUPS resolved it (the default destination's name when `destination` is empty).
    public let queueName: String

    /// Connects to the CUPS server and looks the destination up.
    /// Wraps `httpConnect2` (to `cupsServer()`, port `ippPort()`), `httpSetTimeout` and `cupsGetNamedDest`.
    /// - Parameter timeoutMilliseconds: for the connect, and for every later request on the connection
    ///   (one that gets no answer this long fails: a hung or stopped cupsd).
    /// - Throws: ``PrintError`` when the server does not answer or the destination does not exist.
    public init(destination: String, timeoutMilliseconds: Int32 = 5000) throws(PrintError) {
        self.destination = destination
        let server = String(cString: cupsServer())
        guard let http = httpConnect2(server, ippPort(), nil, AF_UNSPEC, cupsEncryption(), 1, timeoutMilliseconds, nil) else {
            throw PrintError(call: "httpConnect2", message: "cannot reach the CUPS server at \(server) (no answer within \(timeoutMilliseconds) ms; is cupsd running?)",
                             destination: destination)
        }
        // Every request on this connection fails after this long without an answer (a cupsd that
        // accepts but does not answer: hung, or stopped) instead of waiting for ever. Wraps `httpSetTimeout`.
        httpSetTimeout(http, Double(timeoutMilliseconds) / 1000, nil, nil)
        guard let d = cupsGetNamedDest(http, destination.isEmpty ? nil : destination, nil) else {
            let e = CUPSConnection.lastError("cupsGetNamedDest", destination)
            httpClose(http)
            throw destination.isEmpty
                ? PrintError(call: e.call, status: e.status, message: "no default destination (set print.destination, or lpadmin -d QUEUE): \(e.message)", destination: "")
                : e
        }
        self.http = http
        self.dest = d
        queueName = String(cString: d.pointee.name)
    }

    deinit {
        if let info { cupsFreeDestInfo(info) }
        cupsFreeDests(1, dest)
        httpClose(http)
    }

    private static func lastError(_ call: String, _ destination: String) -> PrintError {
        let status = cupsLastError()
        return PrintError(call: call, status: String(cString: ippErrorString(status)),
                          message: String(cString: cupsLastErrorString()), destination: destination)
    }

    private func destInfo() throws(PrintError) -> OpaquePointer {
        if let info { return info }
        guard let i = cupsCopyDestInfo(http, dest) else { throw CUPSConnection.lastError("cupsCopyDestInfo", queueName) }
        info = i
        return i
    }

    /// Checks each `(option, value)` against the destination's `option-supported` values.
    /// An option the destination does not list at all (a raw queue lists no `media-supported`) is not checked.
    /// Wraps `cupsFindDestSupported` and `cupsCheckDestSupported`.
    /// - Returns: the first option rejected, or nil.
    public func rejectedOption(_ options: [(String, String)]) throws(PrintError) -> PrintOptionRejected? {
        let info = try destInfo()
        for (option, value) in options {
            guard let attr = cupsFindDestSupported(http, dest, info, option) else { continue }
            if cupsCheckDestSupported(http, dest, info, option, value) == 0 {
                var values: [String] = []
                let count = ippGetCount(attr)
                for i in 0..<min(count, 12) {
                    if let s = ippGetString(attr, i, nil) { values.append(String(cString: s)) }
                    else if ippGetValueTag(attr) == IPP_TAG_RANGE {
                        var upper: Int32 = 0
                        values.append("\(ippGetRange(attr, i, &upper))-\(upper)")
                    } else { values.append(String(ippGetInteger(attr, i))) }
                }
                if count > 12 { values.append("…") }
                return PrintOptionRejected(option: option, value: value, supported: values.joined(separator: ","),
                                           destination: queueName)
            }
        }
        return nil
    }

    /// Submits one JPEG document as a new job with the job-template `options` (`copies`, `media`,
    /// `print-color-mode`, `print-scaling`…).
    /// Wraps `cupsCreateDestJob`, `cupsStartDestDocument`, `cupsWriteRequestData`, `cupsFinishDestDocument`.
    /// - Returns: the job id.
    /// - Throws: ``PrintError`` naming the step that failed; a job created before the failure is cancelled.
    public func submit(jpeg: [UInt8], title: String, options: [(String, String)]) throws(PrintError) -> Int {
        let info = try destInfo()
        var opts: UnsafeMutablePointer<cups_option_t>?
        var count: Int32 = 0
        for (name, value) in options { count = cupsAddOption(name, value, count, &opts) }
        defer { cupsFreeOptions(count, opts) }
        var jobID: Int32 = 0
        guard cupsCreateDestJob(http, dest, info, &jobID, title, count, opts) == IPP_STATUS_OK, jobID > 0 else {
            throw CUPSConnection.lastError("cupsCreateDestJob", queueName)
        }
        guard cupsStartDestDocument(http, dest, info, jobID, title, "image/jpeg", 0, nil, 1) == HTTP_STATUS_CONTINUE else {
            let e = CUPSConnection.lastError("cupsStartDestDocument", queueName)
            _ = cupsCancelDestJob(http, dest, jobID)
            throw e
        }
        let written = jpeg.withUnsafeBufferPointer { buf -> http_status_t in
            buf.baseAddress.map { base in
                base.withMemoryRebound(to: CChar.self, capacity: buf.count) { cupsWriteRequestData(http, $0, buf.count) }
            } ?? HTTP_STATUS_CONTINUE
        }
        guard written == HTTP_STATUS_CONTINUE else {
            let e = CUPSConnection.lastError("cupsWriteRequestData", queueName)
            _ = cupsFinishDestDocument(http, dest, info)
            _ = cupsCancelDestJob(http, dest, jobID)
            throw e
        }
        guard cupsFinishDestDocument(http, dest, info) == IPP_STATUS_OK else {
            let e = CUPSConnection.lastError("cupsFinishDestDocument", queueName)
            _ = cupsCancelDestJob(http, dest, jobID)
            throw e
        }
        return Int(jobID)
    }

    /// Cancels job `id`. Wraps `cupsCancelDestJob`.
    public func cancel(job id: Int) throws(PrintError) {
        guard cupsCancelDestJob(http, dest, Int32(id)) == IPP_STATUS_OK else {
            throw CUPSConnection.lastError("cupsCancelDestJob", queueName)
        }
    }

    /// Every job CUPS remembers on this queue (pending and finished). Wraps `cupsGetJobs2` (`CUPS_WHICHJOBS_ALL`).
    public func jobs() throws(PrintError) -> [CUPSJob] {
        var list: UnsafeMutablePointer<cups_job_t>?
        let n = cupsGetJobs2(http, &list, queueName, 0, CUPS_WHICHJOBS_ALL)
        guard n >= 0 else { throw CUPSConnection.lastError("cupsGetJobs2", queueName) }
        defer { cupsFreeJobs(n, list) }
        var out: [CUPSJob] = []
        guard let list else { return out }
        for i in 0..<Int(n) {
            let j = list[i]
            guard let state = JobState(ipp: j.state) else { continue }
            out.append(CUPSJob(id: Int(j.id), state: state, title: j.title.map { String(cString: $0) } ?? ""))
        }
        return out
    }

    /// The queue's attributes as cupsd reports them. Wraps `cupsDoRequest` (Get-Printer-Attributes).
    public func queueAttributes() throws(PrintError) -> PrinterAttributes {
        let uri = cupsGetOption("printer-uri-supported", dest.pointee.num_options, dest.pointee.options)
            .map { String(cString: $0) } ?? "ipp://localhost/printers/\(queueName)"
        return try CUPSConnection.printerAttributes(http: http, uri: uri, resource: "/printers/\(queueName)", what: queueName)
    }

    /// A printer's own attributes, asked of the printer at `uri` (`ipp://` or `ipps://`) directly,
    /// with a short timeout. Wraps `httpSeparateURI`, `httpConnect2`, `cupsDoRequest`.
    /// - Throws: ``PrintError`` when the printer does not answer (it is off or unreachable).
    public static func deviceAttributes(uri: String, timeoutMilliseconds: Int32 = 2000) throws(PrintError) -> PrinterAttributes {
        var scheme = [CChar](repeating: 0, count: 32), user = [CChar](repeating: 0, count: 256)
        var host = [CChar](repeating: 0, count: 256), resource = [CChar](repeating: 0, count: 1024)
        var port: Int32 = 0
        let status = httpSeparateURI(HTTP_URI_CODING_ALL, uri, &scheme, 32, &user, 256, &host, 256, &port, &resource, 1024)
        guard status.rawValue >= HTTP_URI_STATUS_OK.rawValue else {
            throw PrintError(call: "httpSeparateURI", message: "not a printer URI: \(uri)", destination: uri)
        }
        let encryption = text(scheme) == "ipps" ? HTTP_ENCRYPTION_ALWAYS : HTTP_ENCRYPTION_IF_REQUESTED
        guard let http = httpConnect2(host, port, nil, AF_UNSPEC, encryption, 1, timeoutMilliseconds, nil) else {
            // httpConnect2 leaves no reliable errno (a stale one read "Bad file descriptor"): say what is known.
            throw PrintError(call: "httpConnect2", message: "no connection to \(host):\(port) within \(timeoutMilliseconds) ms",
                             destination: uri)
        }
        defer { httpClose(http) }
        return try printerAttributes(http: http, uri: uri, resource: text(resource), what: uri)
    }

    /// A NUL-terminated C buffer as a String.
    private static func text(_ buffer: [CChar]) -> String {
        String(nulTerminated: buffer)
    }

    private static func printerAttributes(http: OpaquePointer, uri: String, resource: String,
                                          what: String) throws(PrintError) -> PrinterAttributes {
        let request = ippNewRequest(IPP_OP_GET_PRINTER_ATTRIBUTES)
        ippAddString(request, IPP_TAG_OPERATION, IPP_TAG_URI, "printer-uri", nil, uri)
        guard let response = cupsDoRequest(http, request, resource) else {
            if httpError(http) == ETIMEDOUT {
                throw PrintError(call: "cupsDoRequest(Get-Printer-Attributes)", message: "no answer within the timeout (hung or stopped?)", destination: what)
            }
            throw lastError("cupsDoRequest(Get-Printer-Attributes)", what)
        }
        defer { ippDelete(response) }
        guard ippGetStatusCode(response).rawValue < 0x0100 else {
            throw lastError("cupsDoRequest(Get-Printer-Attributes)", what)
        }
        func strings(_ name: String) -> [String] {
            guard let a = ippFindAttribute(response, name, IPP_TAG_ZERO) else { return [] }
            return (0..<ippGetCount(a)).compactMap { i in ippGetString(a, i, nil).map { String(cString: $0) } }
        }
        let state = ippFindAttribute(response, "printer-state", IPP_TAG_ENUM).map { Int(ippGetInteger($0, 0)) } ?? 3
        let accepting = ippFindAttribute(response, "printer-is-accepting-jobs", IPP_TAG_BOOLEAN).map { ippGetBoolean($0, 0) != 0 } ?? true
        return PrinterAttributes(state: state, reasons: strings("printer-state-reasons").filter { $0 != "none" },
                                 acceptingJobs: accepting, message: strings("printer-state-message").first ?? "",
                                 deviceURI: strings("device-uri").first, mediaSupported: strings("media-supported"))
    }
}

extension CUPSConnection {
    /// The destinations the CUPS server offers, with the default marked. Wraps `httpConnect2` and `cupsGetDests2`.
    /// - Throws: ``PrintError`` when the server does not answer.
    public static func destinations(timeoutMilliseconds: Int32 = 3000) throws(PrintError) -> [(name: String, isDefault: Bool, deviceURI: String?)] {
        let server = String(cString: cupsServer())
        guard let http = httpConnect2(server, ippPort(), nil, AF_UNSPEC, cupsEncryption(), 1, timeoutMilliseconds, nil) else {
            throw PrintError(call: "httpConnect2", message: "cannot reach the CUPS server at \(server)", destination: "")
        }
        defer { httpClose(http) }
        var dests: UnsafeMutablePointer<cups_dest_t>?
        let n = cupsGetDests2(http, &dests)
        defer { cupsFreeDests(n, dests) }
        guard let dests else { return [] }
        return (0..<Int(n)).map { i in
            let d = dests[i]
            let uri = cupsGetOption("device-uri", d.num_options, d.options).map { String(cString: $0) }
            return (String(cString: d.name), d.is_default != 0, uri)
        }
    }
}

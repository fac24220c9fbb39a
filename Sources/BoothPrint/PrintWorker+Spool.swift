import BoothClock
import BoothCore
import BoothPorts
import BoothStorage
import BoothJPEG
import BoothSystem
import FoundationEssentials
import Glibc
import Synchronization

/// The spool (`print.spool`): pages written durably, pages the spool had no room for written later (from memory or
/// rendered again from the saved picture), pages of requests the journal never recorded recovered at start.
extension PrintWorker {
    /// Pages of this journal's requests (`print-TAG-ID.jpg`) with an id the journal never recorded
    /// (at or above `nextID`: asked for while the journal could not be written, then the daemon stopped)
    /// become held requests again, with the same id and so the same job title: a job a run submitted
    /// for it would be found at CUPS by that title. Leftover temp files in the spool are removed.
    static func recoverPages(_ journal: inout PrintJournal, settings: Settings.Print, log: Logger? = nil) -> [PrintRequest] {
        for name in AtomicFile.sweepLeftoverTemps(in: settings.spool).kept {
            log?.warning("print spool: kept \(settings.spool)/\(name), left by a write that was cut short (not removed on "
                         + "\(FileSystemKind.of(settings.spool)?.name ?? "this file system"): its clusters may be half "
                         + "written); check the file system (fsck) with the booth stopped, then delete it")
        }
        let prefix = "print-\(journal.tag)-"
        let ids = listDirectory(settings.spool).compactMap { name -> Int? in
            guard name.hasPrefix(prefix), name.hasSuffix(".jpg") else { return nil }
            return Int(name.dropFirst(prefix.count).dropLast(4))
        }.filter { $0 >= journal.nextID && $0 < PrintJournal.maxID }.sorted()
        return ids.map { id in
            let file = "\(settings.spool)/\(prefix)\(id).jpg"
            var st = stat()
            let made = stat(file, &st) == 0 ? Double(st.st_mtim.tv_sec) : Date().timeIntervalSince1970
            journal.nextID = id
            return journal.add(captureID: nil, source: "recovered page \(id)", file: file, copies: settings.copies,
                               media: settings.media, now: made)
        }
    }

    /// Writes `page` as request `r`'s file (AtomicFile, durable) and clears its `renderPending` in memory
    /// (the journal is written after). - Returns: nil, or why it was not written.
    func writePage(_ page: [UInt8], for r: PrintRequest) -> String? {
        do {
            try makeDirectories(directoryName(of: r.file))
            try AtomicFile.write(page, to: r.file, durable: true, replace: true)
        } catch {
            return "\(error)"
        }
        shared.withLock { s in
            s.pendingPages[r.id] = nil
            if let i = s.journal.requests.firstIndex(where: { $0.id == r.id }) {
                s.journal.requests[i].renderPending = nil
                s.journalVersion += 1
            }
        }
        return nil
    }

    /// How long a print promised with its picture's save waits for the runtime's request before its page is
    /// rendered from the saved picture, ms.
    static let awaitingRequestMilliseconds = 60_000

    /// Writes the pages of held requests the spool had no room for: from memory, or rendered again from
    /// the saved picture (after a restart). Stops at the first that fails (the spool is still full).
    /// A page that can never be made (no picture known, the picture unreadable) fails its request.
    /// - Returns: false when a write failed (still no room: the thread tries again 2 s later, so a full
    ///   disk does not cost a render every poll).
    @discardableResult
    func writePendingPages(settings: Settings.Print, renderer: inout PrintRenderer?) -> Bool {
        let (pending, inMemory) = shared.withLock { s -> ([PrintRequest], Set<Int>) in
            let pending = s.journal.requests.filter { $0.state == .held && $0.renderPending == true }
            let ids = Set(pending.map(\.id))
            s.pendingPages = s.pendingPages.filter { ids.contains($0.key) }
            return (pending, Set(s.pendingPages.keys))
        }
        // A promise waits for the runtime's request (its bytes, code and grace), which comes within a moment of the
        // save; one whose request never came (its session ended at the compose deadline, its picture not read back)
        // is rendered from its picture after ``awaitingRequestMilliseconds``, not left unprinted until a restart.
        let t = clock.now()
        let overdue = shared.withLock { s in
            s.awaitingRequest.filter { id in
                s.requestedMonotonic[id].map { t.milliseconds(since: $0) >= Double(PrintWorker.awaitingRequestMilliseconds) } ?? true
            }
        }
        for id in overdue.sorted() {
            shared.withLock { _ = $0.awaitingRequest.remove(id) }
            log.notice("print \(id): no request for its promised picture in \(PrintWorker.awaitingRequestMilliseconds / 1000) s; "
                       + "rendered from the saved picture")
        }
        for r in pending where !shared.withLock({ $0.awaitingRequest.contains(r.id) }) {
            var page = inMemory.contains(r.id) ? shared.withLock { $0.pendingPages[r.id] } : nil
            if page == nil {
                guard let photo = r.photo else {
                    // In this run the picture's save may still be noted; after a restart it cannot be.
                    if r.captureID != nil { continue }
                    mutate { _ = $0.journal.finish(r.id, .failed, note: "its page was never written (the spool was full) and no saved picture is known", now: now()) }
                    log.error("print \(r.id) (\(r.source)): its page was never written (the spool was full) and no saved picture is known; not printed")
                    continue
                }
                do {
                    guard let data = FileManager.default.contents(atPath: photo) else {
                        throw PrintError(call: "read", message: "\(photo) unreadable", destination: "")
                    }
                    // The request's own media (journaled; it may be from before a reload).
                    guard let media = r.media == settings.media ? settings.mediaSize : MediaSize(pwg: r.media) else {
                        throw PrintError(call: "render", message: "media \(r.media) unknown", destination: "")
                    }
                    if renderer == nil { renderer = try PrintRenderer() }
                    guard let renderer else { return true }
                    var code: PageCode?
                    if let text = r.codeText, let corner = r.codeCorner.flatMap(PictureQRSetting.init(rawValue:)) {
                        code = PageCode(text: text, corner: corner)
                    }
                    page = try renderer.render(Array(data), to: PrintRenderer.pageSize(for: media, dpi: settings.dpi),
                                               code: code, dpi: settings.dpi)
                } catch {
                    mutate { _ = $0.journal.finish(r.id, .failed, note: "page not rendered from \(photo): \(error)", now: now()) }
                    log.error("print \(r.id) (\(r.source)): page not rendered from \(photo): \(error); not printed")
                    continue
                }
            }
            guard let page else { continue }
            if let failure = writePage(page, for: r) {
                shared.withLock { s in
                    if r.photo == nil || s.pendingPages.count < 8 { s.pendingPages[r.id] = page }
                }
                log.debug("print \(r.id): page still not written: \(failure)")
                return false
            }
            if inMemory.contains(r.id) || r.photo == nil {
                log.notice("print \(r.id) (\(r.source)): page written to \(r.file) (the spool had room again); held")
            } else {
                log.notice("print \(r.id) (\(r.source)): page rendered from \(r.photo ?? "") and written to \(r.file); held")
            }
        }
        return true
    }

    /// At a stop: requests the journal on disk does not hold (it could not be written) are lost with
    /// this run, unless their page is in the spool (recovered at the next start); each is named.
    func reportUnjournaled() {
        let (journalError, pending) = shared.withLock { s in
            (s.journalError, s.journal.requests.filter { $0.state == .held && $0.renderPending == true && $0.photo == nil })
        }
        guard let journalError else {
            for r in pending {
                log.error("print \(r.id) (\(r.source)): its page was never written and no saved picture is known; not printed after the restart")
            }
            return
        }
        log.error("print journal not written at the stop (\(journalError)): requests since the last write are printed after "
                  + "the restart only if their page is in the spool; no job was submitted without a journaled entry")
    }
}

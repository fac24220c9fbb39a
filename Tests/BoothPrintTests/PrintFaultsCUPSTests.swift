import BoothCore
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothStorage
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Testing

extension CUPSStack {
    /// cupsd's pid (cups-stack.sh records it), or nil.
    var cupsdPID: pid_t? {
        FileManager.default.contents(atPath: "\(dir)/cupsd.pid")
            .flatMap { Int32(String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}

extension PrintWorkerCUPSTests {
    @Test("a cupsd that stops answering (SIGSTOP) is unavailable, cups-unreachable, after the poll deadline: on the review screen and in status; answered again, the job completes")
    func cupsStopsAnswering() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let rig = try PrintRig()
        let pid = try #require(rig.stack.cupsdPID, "no cupsd.pid in \(rig.stack.dir)")
        defer { kill(pid, SIGCONT); rig.stack.release(); rig.stop() }
        rig.stack.setJobMode("hold")
        rig.worker.request(jpeg: photo, captureID: 1, source: "session 1")
        #expect(await eventually { rig.stack.printed().count == 1 && rig.worker.journal.requests.first?.jobID != nil }, "\(rig.logs.text)")
        #expect(await eventually { rig.worker.status().health == "ready" }, "\(rig.worker.status())")
        #expect(rig.worker.reviewText(captureID: 1) == "Printing…")
        let shown = Box(0)
        rig.worker.observe { if rig.worker.reviewText(captureID: 1) == "Printer offline — your photo is saved" { shown.update { $0 += 1 } } }
        #expect(kill(pid, SIGSTOP) == 0)
        let stoppedAt = Date()
        // The deadline: max(3 × 200 ms, 10 s), plus one poll interval.
        #expect(await eventually(timeoutSeconds: 30) { rig.worker.status().health == "unavailable" }, "\(rig.worker.status())")
        let after = Date().timeIntervalSince(stoppedAt)
        #expect(after < 20, "unavailable only after \(after) s")
        let status = rig.worker.status()
        #expect(status.reasons == ["cups-unreachable"], "\(status)")
        #expect(status.message?.isEmpty == false, "\(status)")
        #expect(rig.worker.reviewText(captureID: 1) == "Printer offline — your photo is saved")
        #expect(await eventually { shown.get > 0 }, "the review screen was not told")
        // Answering again: the poll ends, the health is CUPS's again.
        #expect(kill(pid, SIGCONT) == 0)
        #expect(await eventually { rig.worker.status().health != "unavailable" }, "\(rig.worker.status())")
        #expect(rig.worker.reviewText(captureID: 1) == "Printing…")
        // Hung again, a print is asked for and the daemon stops: the stopping thread journals it.
        #expect(kill(pid, SIGSTOP) == 0)
        #expect(await eventually(timeoutSeconds: 30) { rig.worker.status().health == "unavailable" }, "\(rig.worker.status())")
        rig.worker.request(jpeg: photo, captureID: 2, source: "session 2")
        #expect(rig.worker.reviewText(captureID: 2) == "Printer offline — your photo is saved")
        rig.worker.stop(timeoutSeconds: 1)
        let onDisk = FileManager.default.contents(atPath: rig.settings.journal).flatMap { try? PrintJournal.decode($0) }
        #expect(onDisk?.requests.map(\.source) == ["session 1", "session 2"], "\(rig.logs.text)")
        #expect(onDisk?.requests.last?.state == .held)
        #expect(kill(pid, SIGCONT) == 0)
        rig.stack.release()
        // The restart prints it; the first job completes.
        let clock = rig.clock
        let again = PrintWorker(settings: rig.settings, log: rig.logs.logger(), now: { clock.now })
        again.launch()
        defer { again.stop() }
        #expect(await eventually { again.journal.requests.map(\.state) == [.completed, .completed] },
                "\(again.journal.requests.map(\.state))\n\(rig.logs.text)")
        #expect(rig.stack.printed().count == 2)
        #expect(rig.logs.contains("printer unavailable: cups-unreachable"), "\(rig.logs.text)")
    }

    @Test("copies beyond the paper count: held as not enough paper (needs, counted) on the review screen and in status, nothing printed; a refill prints it; at 0 counted: out of paper")
    func paperCountShort() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let rig = try PrintRig { $0.copies = 3; $0.sheets = 2 }
        defer { rig.stop() }
        rig.worker.request(jpeg: photo, captureID: 1, source: "session 1")
        #expect(await eventually { rig.worker.status().reasons.contains("paper-count") }, "\(rig.worker.status())\n\(rig.logs.text)")
        let status = rig.worker.status()
        #expect(status.health == "unavailable")
        #expect(status.message == "not enough paper: print 1 needs 3 sheets, 2 counted — refill (photoboothctl refill SHEETS)", "\(status)")
        #expect(rig.worker.reviewText(captureID: 1) == "Not enough paper — your photo is saved")
        let polls = rig.worker.polls
        #expect(await eventually { rig.worker.polls >= polls + 3 })
        #expect(rig.states() == [.held])
        #expect(rig.stack.printed().count == 0, "printed with too few sheets counted")
        rig.worker.refill(sheets: 10)
        #expect(await eventually { rig.states() == [.completed] }, "\(rig.logs.text)")
        #expect(rig.stack.printed().count == 1)
        #expect(rig.worker.journal.sheetsRemaining == 7)
        // Counted out: nothing more is sent, and the guest is told.
        rig.worker.refill(sheets: 0)
        rig.worker.request(jpeg: photo, captureID: 2, source: "session 2")
        #expect(await eventually { rig.worker.status().reasons.contains("paper-out") }, "\(rig.worker.status())")
        #expect(rig.worker.reviewText(captureID: 2) == "Out of paper — your photo is saved")
        #expect(rig.worker.status().message?.hasPrefix("not enough paper: print 2 needs 3 sheets, 0 counted") == true)
        let polls2 = rig.worker.polls
        #expect(await eventually { rig.worker.polls >= polls2 + 3 })
        #expect(rig.stack.printed().count == 1)
    }
}

extension PrintWorkerCUPSTests {
    @Test("a poll that does not end (here held in the journal write before a submission) turns the health unavailable after the deadline, the observer is told; when it ends the health is CUPS's again")
    func overduePoll() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let photo = try #require(samplePhoto(), "no sample photo")
        let stack = try CUPSStack()
        defer { stack.stop() }
        let settings = printSettings(dir: stack.dir, queue: stack.queue)
        let logs = LogLines()
        let gate = Box(false)
        let worker = PrintWorker(settings: settings, log: logs.logger(), journalWriter: { bytes, path in
            while gate.get { usleep(10_000) }
            try AtomicFile.write(bytes, to: path, durable: true, replace: true)
        })
        worker.launch()
        defer { gate.set(false); worker.stop() }
        #expect(await eventually { worker.status().health == "ready" }, "\(worker.status())")
        #expect(stack.lp("cupsdisable", [stack.queue]) == 0)
        #expect(await eventually { worker.status().reasons.contains("paused") })
        worker.request(jpeg: photo, captureID: 1, source: "session 1")
        #expect(await eventually { worker.journal.held.count == 1 })
        let polls = worker.polls
        #expect(await eventually { worker.polls >= polls + 2 }, "journaled, polled")
        let told = Box(0)
        worker.observe { if worker.status().message?.hasPrefix("CUPS has not answered") == true { told.update { $0 += 1 } } }
        gate.set(true)
        #expect(stack.lp("cupsenable", [stack.queue]) == 0)
        let blockedAt = Date()
        #expect(await eventually(timeoutSeconds: 30) { worker.status().health == "unavailable" && worker.status().reasons == ["cups-unreachable"] },
                "\(worker.status())")
        #expect(Date().timeIntervalSince(blockedAt) >= 9, "the deadline is 10 s")
        #expect(worker.status().message?.hasPrefix("CUPS has not answered for") == true, "\(worker.status())")
        #expect(worker.reviewText(captureID: 1) == "Printer offline — your photo is saved")
        #expect(await eventually { told.get > 0 }, "the observer (the review screen) was not told")
        gate.set(false)
        #expect(await eventually { worker.journal.requests.map(\.state) == [.completed] }, "\(logs.text)")
        #expect(worker.status().health != "unavailable", "\(worker.status())")
        #expect(logs.contains("printer unavailable: cups-unreachable (CUPS has not answered"), "\(logs.text)")
    }
}

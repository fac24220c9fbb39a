import BoothClock
import BoothCore
import BoothPorts
import BoothPrint
import BoothRuntime
import BoothTestSupport
import Foundation
import Synchronization
import Testing
@testable import BoothWiring

// print.mode = press (and auto's long press) end to end: the booth's runtime in this process, with
// the simulated camera and a button the test presses, printing through the private cupsd and
// ippeveprinter. The review text is the print worker's (`reviewText`), as the review screen shows it.

/// A button the test presses: each `press()` is a new physical press with a fresh id.
final class TestButton: ButtonDevice {
    let identity = "test button"
    private let handler = Mutex<(@Sendable (ButtonSignal) -> Void)?>(nil)
    private let running = Mutex(false)
    private let nextID = Mutex<UInt64>(1)

    func start(_ handler: @escaping @Sendable (ButtonSignal) -> Void) throws {
        self.handler.withLock { $0 = handler }
        running.withLock { $0 = true }
    }
    func stop() { running.withLock { $0 = false } }
    var isRunning: Bool { running.withLock { $0 } }

    private func fire(_ signal: ButtonSignal) { handler.withLock { $0 }?(signal) }
    private func newID() -> UInt64 { nextID.withLock { n in defer { n += 1 }; return n } }
    /// A press now.
    func press() { fire(.press(id: newID(), at: SystemClock().now())) }
    /// A press held for button.long_press (its press is not the one that started the session).
    func longPress() {
        let id = newID()
        fire(.press(id: id, at: SystemClock().now()))
        fire(.longPress(id: id))
    }
}

/// A booth runtime on its own thread, printing to `stack`.
final class PrintingBooth: Sendable {
    let runtime: BoothRuntime
    let button = TestButton()
    let logs = LogLines()
    let settings: Settings
    private let exit = Mutex<Int32?>(nil)

    /// - Parameter qr: `picture.qr`; other than off, the gallery is on too (the daemon's index and
    ///   sink, `gallery.url_base` http://10.42.0.1:8080), so each print carries its picture's URL.
    init(stack: CUPSStack, mode: PrintMode, qr: PictureQRSetting = .off, dpi: Int = 100, store: (@Sendable (Settings.Storage) -> any PhotoStorage)? = nil) {
        // Review lasts until the test moves on (it stops the booth).
        var s = fastSettings(dir: stack.dir, reviewMilliseconds: 600_000)
        s.print = printSettings(dir: stack.dir, queue: stack.queue)
        s.print.mode = mode
        s.print.dpi = dpi
        let log = logs.logger()
        var options = RuntimeOptions()
        if qr != .off {
            s.picture.qr = qr
            s.gallery.enabled = true
            s.gallery.index = "\(stack.dir)/gallery/index.sqlite"
            s.gallery.secret = "\(stack.dir)/gallery.secret"
            s.gallery.urlBase = "http://10.42.0.1:8080"
            let made = gallery(s, log: log)
            options.pictureSinks = made.sink.map { [$0] } ?? []
            options.pictureLink = made.link
        }
        let settings = s
        self.settings = s
        let button = self.button
        var factory = simulatedDevices(realCamera: false, log: log)
        factory.button = { _ in button }
        factory.displays = { _, _, _ in [] }
        if let store { factory.photoStorage = store }
        runtime = BoothRuntime(settings: settings, options: options, factory: factory, log: log,
                               reloader: { .success(settings) })
        let thread = Thread { [self] in
            let code = runtime.run()
            exit.withLock { $0 = code }
        }
        thread.name = "printing-booth"
        thread.start()
    }

    // The runtime sees the printer through its port; these tests look inside the print worker it made.
    var printer: PrintWorker { runtime.printer as! PrintWorker }

    /// The capture under review, nil when not in review.
    var reviewing: UInt64? {
        if case let .review(id) = runtime.currentState { return id }
        return nil
    }

    /// Stops the runtime and waits for `run()` to return.
    func stop() {
        runtime.requestShutdown()
        waitUntil(15) { exit.withLock { $0 } != nil }
    }

    /// Waits until the printer was polled `n` more times (the worker had every chance to act).
    func settle(_ n: Int = 3) async -> Bool {
        let polls = printer.polls
        return await eventually { printer.polls >= polls + n }
    }
}

// Part of the serialized print suite: CUPS_SERVER is process-wide.
extension PrintWorkerCUPSTests {
    @Test("press mode: a press in review prints exactly once and review says Printing…; a second press prints nothing more; a long press in review skips")
    func pressMode() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let stack = try CUPSStack()
        defer { stack.stop() }
        stack.setJobMode("hold")
        let booth = PrintingBooth(stack: stack, mode: .press)
        var stopped = false
        defer { if !stopped { booth.stop() } }
        #expect(await eventually { booth.printer.polls > 0 && booth.printer.health.allowsSubmission }, "\(booth.printer.status())")

        // A session: review, and nothing printed until the guest presses.
        booth.button.press()
        #expect(await eventually { booth.reviewing != nil }, "\(booth.logs.text)")
        let first = try #require(booth.reviewing)
        #expect(await booth.settle())
        #expect(booth.printer.journal.requests.isEmpty)
        #expect(booth.printer.reviewText(captureID: first) == nil)

        // The press in review: printing, the job at the printer (held there by its command).
        booth.button.press()
        #expect(await eventually { booth.printer.reviewText(captureID: first) == "Printing…" }, "\(booth.logs.text)")
        #expect(await eventually { stack.printed().count == 1 })
        // The loop hands the request to the print thread before it writes this line.
        #expect(await eventually { booth.logs.contains("print of the session's picture (capture \(first)) requested by a press") }, "\(booth.logs.text)")
        // A second press during the same review: no second request, no second job.
        booth.button.press()
        #expect(await eventually { booth.logs.contains("press ignored in review") })
        #expect(await booth.settle())
        #expect(booth.printer.journal.requests.count == 1)
        #expect(try stack.jobs().count == 1)
        stack.release()
        #expect(await eventually { booth.printer.reviewText(captureID: first) == "Printed" }, "\(booth.logs.text)")
        #expect(booth.printer.journal.requests.map(\.state) == [.completed])
        #expect(booth.reviewing == first, "still the same review")
        #expect(stack.printed().count == 1, "printed exactly once")
        #expect(booth.printer.journal.sheetsRemaining == 49)
        booth.stop()
        stopped = true

        // Started again (same journal): a long press in review skips. Its press comes first and asks
        // for the print, which waits button.long_press before it may go out: the long press cancels
        // it in the journal and it never reaches CUPS. A press after it prints nothing.
        let again = PrintingBooth(stack: stack, mode: .press)
        defer { again.stop() }
        #expect(await eventually { again.printer.polls > 0 && again.printer.health.allowsSubmission })
        again.button.press()
        #expect(await eventually { again.reviewing != nil }, "\(again.logs.text)")
        let second = try #require(again.reviewing)
        // The previous run's request is not this run's capture, whatever its number.
        #expect(again.printer.reviewText(captureID: second) == nil)
        again.button.longPress()
        #expect(await eventually { again.logs.contains("printing of the session's picture (capture \(second)) skipped by a long press") }, "\(again.logs.text)")
        #expect(await eventually { again.printer.journal.requests.map(\.state) == [.completed, .cancelled] }, "\(again.logs.text)")
        #expect(again.printer.journal.requests.last?.note == "skipped by a long press")
        #expect(again.printer.reviewText(captureID: second) == "Not printing")
        again.button.press()
        // The press reached the machine (after a skip it is ignored), then enough polls to be past the grace.
        #expect(await eventually { again.logs.contains("press ignored in review") }, "\(again.logs.text)")
        #expect(await again.settle(8), "past the long-press grace")
        #expect(again.printer.journal.requests.count == 2, "no request after the skip")
        #expect(try stack.jobs().count == 1, "the skipped picture never reached CUPS\n\(again.logs.text)")
        #expect(stack.printed().count == 1)
        #expect(again.printer.journal.sheetsRemaining == 49)
    }

    @Test("auto mode: a long press in review skips that picture's print; it never reaches the printer")
    func autoLongPress() async throws {
        if let why = missingCUPSTools() { print(why); return }
        let stack = try CUPSStack()
        defer { stack.stop() }
        let booth = PrintingBooth(stack: stack, mode: .auto)
        defer { booth.stop() }
        #expect(await eventually { booth.printer.polls > 0 && booth.printer.health.allowsSubmission })
        // The queue is paused, so the auto print waits in the journal when the long press comes.
        #expect(stack.lp("cupsdisable", [stack.queue]) == 0)
        #expect(await eventually { booth.printer.status().reasons.contains("paused") })
        booth.button.press()
        #expect(await eventually { booth.reviewing != nil }, "\(booth.logs.text)")
        let id = try #require(booth.reviewing)
        #expect(await eventually { booth.printer.journal.held.map(\.captureID) == [id] }, "\(booth.logs.text)")
        #expect(booth.printer.reviewText(captureID: id) == "Printer paused — your photo is saved")
        booth.button.longPress()
        #expect(await eventually { booth.printer.journal.requests.map(\.state) == [.cancelled] }, "\(booth.logs.text)")
        #expect(booth.printer.journal.requests.first?.note == "skipped by a long press")
        #expect(booth.printer.reviewText(captureID: id) == "Not printing")
        #expect(stack.lp("cupsenable", [stack.queue]) == 0)
        #expect(await eventually { booth.printer.health.allowsSubmission })
        #expect(await booth.settle())
        #expect(try stack.jobs().isEmpty)
        #expect(stack.printed().isEmpty)
        #expect(booth.printer.journal.sheetsRemaining == 50)
    }
}

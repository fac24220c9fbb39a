import BoothClock
import BoothCore
import BoothPorts
import BoothSystem
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing
@testable import BoothControl
@testable import BoothRuntime
@testable import BoothStorage
@testable import BoothWiring

/// A pipe standing in for the terminal.
final class TestPipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Mutex<Int32>

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw FileError(call: "pipe", errno: errno, path: "pipe") }
        readEnd = fds[0]
        writeEnd = Mutex(fds[1])
    }

    func type(_ text: String) {
        let bytes = Array(text.utf8)
        writeEnd.withLock { fd in _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } }
    }

    /// End of input.
    func closeWriteEnd() {
        writeEnd.withLock { fd in
            if fd >= 0 { close(fd) }
            fd = -1
        }
    }

    func closeAll() {
        closeWriteEnd()
        close(readEnd)
    }
}

func threadNames() -> [String] {
    listDirectory("/proc/self/task").map { tid in
        let bytes = (try? AtomicFile.read("/proc/self/task/\(tid)/comm")) ?? []
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Threads of this process whose name (`/proc/self/task/*/comm`) is `name`.
func threadCount(named name: String) -> Int {
    listDirectory("/proc/self/task").filter { tid in
        guard let bytes = try? AtomicFile.read("/proc/self/task/\(tid)/comm") else { return false }
        return String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == name
    }.count
}

@Suite(.serialized) struct KeyboardButtonTests {
    @Test func enterIsAPressCEnterALongPressAndEndOfInputEndsTheThread() async throws {
        let input = try TestPipe()
        defer { input.closeAll() }
        let logs = LogRecorder()
        let keyboard = KeyboardButton(fd: input.readEnd, clock: SystemClock(), log: logs.logger())
        let signals = Mutex<[ButtonSignal]>([])
        try keyboard.start { signal in signals.withLock { $0.append(signal) } }
        #expect(keyboard.ended == nil)
        #expect(await eventually { threadCount(named: "keyboard") == 1 }, "the keyboard thread runs: \(threadNames())")

        input.type("\n")
        try #require(await eventually { signals.withLock { $0.count } == 1 })
        input.type("c\n")
        try #require(await eventually { signals.withLock { $0.count } == 2 })
        let got = signals.withLock { $0 }
        guard case let .press(first, _) = got[0] else {
            Issue.record("Enter is a press, got \(got[0])"); return
        }
        guard case let .longPress(second) = got[1] else {
            Issue.record("c + Enter is a long press, got \(got[1])"); return
        }
        #expect(first != second, "a long press typed later is a new press, so it cancels")

        input.closeWriteEnd()
        try #require(await eventually { logs.all.contains { $0.contains("end of input") } })
        #expect(await eventually { threadCount(named: "keyboard") == 0 }, "the thread ends at end of input")
        #expect(logs.all.filter { $0.contains("end of input") }.count == 1)
        #expect(signals.withLock { $0.count } == 2, "no signal after end of input")
        #expect(keyboard.ended == "input ended")
        #expect(keyboard.isRunning, "no fault: the booth runs on without the keyboard")
    }

    @Test func theRuntimeRunsOnTheKeyboardAndKeepsWorkingAfterEndOfInput() async throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        let input = try TestPipe()
        defer { input.closeAll() }
        var settings = fastSettings(dir: dir)
        settings.session.previewMilliseconds = nil  // preview until a press
        let keyboardLogs = LogRecorder()
        let keyboard = KeyboardButton(fd: input.readEnd, clock: SystemClock(), log: keyboardLogs.logger())
        let booth = TestBooth(settings, button: keyboard)
        booth.start()
        defer { booth.shutdownAndWait() }
        try #require(await eventually { booth.camera.isStreaming })

        input.type("\n")
        try #require(await eventually { booth.state.isPreview }, "Enter starts a session")
        input.type("c\n")
        try #require(await eventually { booth.state.isIdle }, "c + Enter cancels it")
        #expect(await eventually { booth.runtime.counters.cancelled == 1 })

        input.type("\n")
        try #require(await eventually { booth.state.isPreview })
        input.type("\n")
        try #require(await eventually { booth.runtime.counters.completed == 1 }, "\(booth.logText)")

        input.closeWriteEnd()
        try #require(await eventually { keyboardLogs.all.contains { $0.contains("end of input") } })
        #expect(await eventually { threadCount(named: "keyboard") == 0 })
        let button = booth.runtime.statusReport(configPath: "-").button
        #expect(!button.running, "status does not show the keyboard as a working button after end of input")
        #expect(button.ended == "input ended")

        // The booth still runs: presses from elsewhere (auto-press, the control socket) work.
        booth.runtime.loop.post(.press(id: 1_000, at: Monotonic.now()))
        try #require(await eventually { booth.state.isPreview })
        booth.runtime.loop.post(.press(id: 1_001, at: Monotonic.now()))
        #expect(await eventually { booth.runtime.counters.completed == 2 }, "\(booth.logText)")
        #expect(await eventually { savedCaptures(in: settings.storage.dir).count == 2 })
    }
}


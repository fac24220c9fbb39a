import BoothCamera
import BoothCore
import Foundation

/// `photoboothd --check`: opens each device the settings name, once, and says what is wrong in
/// the same words the daemon's fault log uses. Returns 0 when all work, 69 (EX_UNAVAILABLE) otherwise.
public func checkDevices(settings: Settings, factory: DeviceFactory, log: Logger) -> Int32 {
    var problems = 0
    func report(_ ok: Bool, _ what: String) {
        if ok { log.info("check: ok: \(what)") } else { log.error("check: \(what)"); problems += 1 }
    }

    let store = PhotoStore(directory: settings.storage.dir)
    do {
        try store.prepare()
        report(true, "storage \(settings.storage.dir) (\(formatBytes((try? store.freeBytes()) ?? 0)) free)")
    } catch {
        report(false, "storage: photos directory not writable: \(error)")
    }

    let camera = factory.camera(settings)
    do {
        let info = try camera.start(streamRequest(from: settings))
        var frame: Frame?
        for _ in 0..<10 where frame == nil { frame = try camera.nextFrame(timeoutMilliseconds: 500) }
        let dropped = camera.statistics.droppedByDefect
        camera.stop()
        if frame == nil { throw CameraWorkerError.noFrames(badFrames: dropped) }
        report(true, "camera \(info)")
        for w in info.warnings { log.warning("check: camera: \(w)") }
    } catch {
        camera.stop()
        report(false, "camera not available: \(error)")
    }

    let button = factory.button(settings)
    do {
        try button.start { _ in }
        report(true, "button \(button.identity)")
    } catch {
        report(false, "button not available: \(error)")
    }
    button.stop()
    if let led = factory.led(settings) {
        led.set(.off)
        led.stop()
    }
    return problems == 0 ? ExitCode.ok : ExitCode.unavailable
}

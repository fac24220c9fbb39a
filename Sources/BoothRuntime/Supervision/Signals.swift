import BoothPorts
import Dispatch
import Glibc

/// Turns SIGTERM and SIGINT into ``BoothRuntime/requestShutdown()`` and SIGHUP into
/// ``BoothRuntime/reloadInBackground()``, handled on a dispatch queue of their own (the signals' default
/// actions are switched off). No handler waits: a reload's wait for the loop is on the runtime's reload
/// thread, so a SIGTERM right after a SIGHUP is handled at once. Keep the returned sources alive for as
/// long as the handlers should run.
public func installSignalHandlers(runtime: BoothRuntime, log: Logger) -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "signals")
    var sources: [any DispatchSourceSignal] = []
    for sig in [SIGTERM, SIGINT, SIGHUP] {
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
        source.setEventHandler { @Sendable in handleSignal(sig, runtime: runtime, log: log) }
        source.resume()
        sources.append(source)
    }
    return sources
}

/// What the handler of `sig` does: SIGHUP hands a reload to the runtime's reload thread, SIGTERM and
/// SIGINT ask it to stop. Returns at once in every case.
func handleSignal(_ sig: Int32, runtime: BoothRuntime, log: Logger) {
    if sig == SIGHUP {
        log.notice("SIGHUP: reloading settings")
        if !runtime.reloadInBackground() {
            log.error("SIGHUP: no thread for the reload (pthread_create failed: the thread limit); settings not reloaded")
        }
    } else {
        log.notice("signal \(sig): stopping")
        runtime.requestShutdown()
    }
}

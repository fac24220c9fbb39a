import BoothPorts
import Dispatch
import Glibc

/// Turns SIGTERM and SIGINT into ``BoothRuntime/requestShutdown()`` and SIGHUP into
/// ``BoothRuntime/requestReload()``, handled on a dispatch queue of their own (the signals' default
/// actions are switched off). Keep the returned sources alive for as long as the handlers should run.
public func installSignalHandlers(runtime: BoothRuntime, log: Logger) -> [any DispatchSourceSignal] {
    let queue = DispatchQueue(label: "signals")
    var sources: [any DispatchSourceSignal] = []
    for (sig, reload) in [(SIGTERM, false), (SIGINT, false), (SIGHUP, true)] {
        signal(sig, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
        source.setEventHandler { @Sendable in
            if reload {
                log.notice("SIGHUP: reloading settings")
                runtime.requestReload()
            } else {
                log.notice("signal \(sig): stopping")
                runtime.requestShutdown()
            }
        }
        source.resume()
        sources.append(source)
    }
    return sources
}

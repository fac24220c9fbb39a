// BoothRuntime: runs the core's commands against the ports.
//
// Owns the main loop (EventLoop), the command interpreter (BoothRuntime in Runtime.swift: the machine's
// commands become effects), the workers on threads of their own (camera handlers, storage, compose,
// picture delivery, print control), the screens as one sink (ScreenSet), the LED retry, the reload,
// systemd supervision (Supervision/) and DeviceFactory, its port of construction.
//
// May import: BoothCore, BoothPorts, BoothClock and the system: no device module, no C library target
// (Package.swift and Tests/BoothRuntimeTests/ArchitectureTests.swift hold it to that). The concrete
// devices are photoboothd's wiring.

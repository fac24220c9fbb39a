// BoothRuntime: runs the core's commands against the ports.
//
// Owns the main loop (EventLoop) and the command interpreter (BoothRuntime in Runtime.swift: the machine's
// commands become effects). Each other concern has a file of its own: the options and the port of
// construction (RuntimeOptions.swift: DeviceFactory), the loop's state (LoopState.swift), the reload
// protocol and SIGHUP's reload thread (Reload.swift), the review and idle screens with the gallery's codes
// (ReviewScreens.swift), print requests with their QR code (PrintRequests.swift), the button and LED
// (InputDevices.swift), shutdown (Shutdown.swift), the control socket's side (Admin.swift), waits on the
// injected clock (ClockCondition.swift); the workers on threads of their own (camera handlers, storage,
// compose, picture delivery), the screens as one sink (ScreenSet) and systemd supervision (Supervision/).
//
// May import: BoothCore, BoothSystem, BoothPorts, BoothClock and the system: no device module, no C library target
// (Package.swift and Tests/BoothRuntimeTests/ArchitectureTests.swift hold it to that). The concrete
// devices are photoboothd's wiring.

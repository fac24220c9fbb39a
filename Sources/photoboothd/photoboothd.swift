// photoboothd: the kiosk daemon, and the wiring of concrete devices.
//
// Owns the command line (main.swift), reading the config file (ConfigFile.swift), the device factories
// that fill the runtime's DeviceFactory with the device modules' kinds (DeviceFactories.swift: V4L2 or
// simulated camera, GPIO button and LED, framebuffer and file preview, photos directory, totals, print
// worker, orientation tracker), the file preview (FilePreview), the terminal as the button
// (KeyboardButton), the picture composer (LayoutComposer.swift) and --check (Check.swift).
//
// May import: every Swift module (BoothRuntime and the device modules), not a C library target. Tests
// reach it with @testable import photoboothd.

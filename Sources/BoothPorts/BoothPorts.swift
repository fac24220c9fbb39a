// BoothPorts: the seams between the runtime and the devices: one protocol per device role.
//
// Owns the ports, each with its shapes, units and errors in its doc comment: CameraSource (live view
// and an explicit still capture; PairedCameraSource for live view from a second camera), DisplaySink (screens), PictureSink, Printer, PhotoStorage and
// StatsRecording (storage), OrientationSource, ButtonDevice and LEDDevice; and the log (Logger,
// LogRecorder) and FileError (BoothSystem's SystemCallError) that they share; Logger(threshold:), the stderr writer.
//
// May import: BoothCore, BoothSystem and the system. Device modules implement these; BoothRuntime sees only these.

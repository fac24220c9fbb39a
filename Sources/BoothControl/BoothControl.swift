// BoothControl: the control socket and what goes over it.
//
// Owns the Unix socket server and client (ControlSocket.swift: peer credentials with SO_PEERCRED, the
// group policy, the socket's lock file), the wire protocol (ControlProtocol.swift: one JSON object a line
// each way, the commands and their replies), the `status` and `devices` replies' types and the building
// of `status` (Status.swift), and the command dispatch (`controlHandler(info:devices:jpegSize:)`, with
// the print commands in PrintControl.swift).
//
// May import BoothCore, BoothSystem, BoothPorts, BoothClock, BoothRuntime (its admin API in BoothRuntime/Admin.swift:
// the status snapshot, press, snapshot, reload, stats), BoothStorage (AtomicFile for the lock file,
// StatsStore's date text) and CSysShims. No device module: the listing of the machine's devices comes
// from a closure (BoothDeviceListing's `DeviceReport.gather`, passed by photoboothd), as does the
// snapshot's JPEG size.

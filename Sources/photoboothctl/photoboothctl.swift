// photoboothctl: the operator's command-line tool.
//
// Owns the commands (status, reload, config get/set/validate, print, devices…), which talk to the
// running daemon over the control socket or work on the config file directly.
//
// May import: BoothCore, BoothSystem, BoothClock, BoothPorts, BoothStorage, BoothLayout ([picture] diagnostics), BoothCommandLine,
// BoothRuntime and the system, not a C library target.

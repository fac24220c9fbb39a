// BoothButtons: a button's edges turned into presses, long presses and releases (ButtonDebouncer, a pure
// algorithm: no I/O, no clock of its own) and the events it reports (ButtonEvent, ButtonFault), shared by
// the GPIO button (BoothGPIO) and the input-device button (BoothInput).
//
// May import: BoothCore, BoothSystem (SystemCallError) and the system.

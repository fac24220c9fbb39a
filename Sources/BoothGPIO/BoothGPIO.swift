// BoothGPIO: the button and the LED on GPIO lines through libgpiod (v1 or v2).
//
// Owns the debounced button (GPIOButton, through BoothButtons' ButtonDebouncer: press, long press, stuck), the LED and its
// patterns (GPIOLED, LEDPattern), line addresses, chip information and the line-waiting threads.
// photoboothd wraps them as the ButtonDevice and LEDDevice ports.
//
// May import: BoothCore, BoothSystem, BoothClock, BoothButtons, CGPIODShims (and CGPIOD) and the system.

// BoothPrint: printing through CUPS, behind the Printer port.
//
// Owns the print worker (PrintWorker: requests, held prints, retries), its journal across restarts,
// the renderer (the picture on the media at print.dpi), the CUPS calls and job options (by name), the
// printer's health and the test chart.
//
// May import: BoothCore, BoothPorts, BoothClock, BoothJPEG, BoothStorage (atomic journal writes), CCUPS
// and the system.

// BoothPrint: printing through CUPS, behind the Printer port.
//
// Owns the print worker (PrintWorker: requests, held prints, retries), its journal across restarts,
// the renderer (the picture on the media at print.dpi, with its URL's QR code in a corner), the CUPS calls and job options (by name), the
// printer's health and the test chart.
//
// May import: BoothCore, BoothSystem, BoothPorts, BoothClock, BoothJPEG, BoothStorage (atomic journal writes),
// BoothQRCode, CCUPS
// and the system.

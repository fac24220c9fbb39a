// libFuzzer target: the config file parser (ConfigLexer, SettingsParser, schema validation) and the
// in-place editor, on arbitrary bytes as a config file's text.
import BoothCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size > 0 && data != nil ? Array(UnsafeBufferPointer(start: data, count: size)) : []
    let text = String(decoding: bytes, as: UTF8.self)
    let check = Settings.check(text: text, file: "fuzz.conf")
    // The lexed document gives its text back unchanged, and every diagnostic can be shown.
    if check.document.text != text { fatalError("lexer round trip changed the text") }
    for d in check.diagnostics { _ = d.description }
    _ = Settings.keysSet(inText: text)
    // Overrides from the command line take the same values; a key and value from the first line.
    let first = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    let parts = first.split(separator: "=", maxSplits: 1).map(String.init)
    let key = parts.first ?? "", value = parts.count > 1 ? parts[1] : ""
    if let settings = check.settings { _ = settings.with(overrides: [(key: key, value: value)]) }
    _ = Settings.edit(text: text, file: "fuzz.conf", key: key, value: value)
    return 0
}

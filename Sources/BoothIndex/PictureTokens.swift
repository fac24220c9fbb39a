import BoothStorage
import BoothSystem
import CSodium
import Glibc

/// The pictures' URL tokens: HMAC-SHA-256 (libsodium `crypto_auth_hmacsha256`) of the picture's
/// identity under the booth's secret, its first 16 bytes (128 bits) in lower-case base32 (26
/// characters, `a`–`z` and `2`–`7`). Nobody without the secret can derive one, and the same
/// picture always gets the same token: a lost index is rebuilt with the tokens printed and scanned
/// before.
public struct PictureTokens: Sendable {
    /// Bytes of the secret (`crypto_auth_hmacsha256_KEYBYTES`).
    public static let secretBytes = 32
    /// Characters of a token.
    public static let tokenLength = 26
    private let secret: [UInt8]

    /// With the given secret (tests); it must be ``secretBytes`` long, else nil.
    public init?(secret: [UInt8]) {
        guard secret.count == PictureTokens.secretBytes, sodium_init() >= 0 else { return nil }
        self.secret = secret
    }

    /// With a new random secret (`randombytes_buf`) that lives as long as the value: keys of one
    /// run of a program (the gallery's PIN cookie), never a picture's token.
    public static func ephemeral() -> PictureTokens? {
        guard sodium_init() >= 0 else { return nil }
        var fresh = [UInt8](repeating: 0, count: secretBytes)
        randombytes_buf(&fresh, secretBytes)
        return PictureTokens(secret: fresh)
    }

    /// The secret kept at `path` (in the daemon's state directory, mode 0600, owned by the daemon's
    /// user), made with `randombytes_buf` and written atomically (temp, fsync, rename, fsync of the
    /// folder) when the file is missing.
    /// - Throws: ``IndexError`` (`.failed`) naming the file: unreadable, of the wrong size (a damaged
    ///   secret is never replaced silently: every token printed so far would stop working), or not writable.
    public static func load(orCreate path: String) throws(IndexError) -> PictureTokens {
        guard sodium_init() >= 0 else { throw IndexError(.failed, "gallery secret: libsodium could not be initialised (sodium_init)") }
        var st = stat()
        if stat(path, &st) == 0 {
            if st.st_mode & 0o077 != 0 {
                // Restored from a backup with wider rights: made the daemon's alone again.
                guard chmod(path, 0o600) == 0 else {
                    throw IndexError(.failed, "gallery secret \(path): mode \(String(st.st_mode & 0o777, radix: 8)) lets others read it, "
                                     + "and chmod 0600 failed: \(SystemCallError.reason(of: errno))")
                }
            }
            let bytes: [UInt8]
            do { bytes = try AtomicFile.read(path) } catch { throw IndexError(.failed, "gallery secret \(path): \(error)") }
            guard bytes.count == secretBytes, let tokens = PictureTokens(secret: bytes) else {
                throw IndexError(.failed, "gallery secret \(path): \(bytes.count) bytes, not \(secretBytes); it is left as it is "
                                 + "(a new secret would change every picture's URL); restore it, or remove it to start new URLs")
            }
            return tokens
        }
        guard errno == ENOENT else {
            throw IndexError(.failed, "gallery secret \(path): \(SystemCallError.reason(of: errno)); not made anew (it may exist)")
        }
        var fresh = [UInt8](repeating: 0, count: secretBytes)
        randombytes_buf(&fresh, secretBytes)
        do { try AtomicFile.write(fresh, to: path, mode: 0o600) } catch { throw IndexError(.failed, "gallery secret \(path): \(error)") }
        guard let tokens = PictureTokens(secret: fresh) else { throw IndexError(.failed, "gallery secret \(path): not usable") }
        return tokens
    }

    /// A photo's identity: its folder's id (``StorageIDs``), its path under `storage.dir`
    /// (`2026-12-01/booth-000042-picture.jpg`) and its size in bytes, which the same file keeps and
    /// another photo of the same name almost never has.
    public static func identity(folder: String, path: String, bytes: Int64) -> String { "\(folder)/\(path)/\(bytes)" }

    /// The token of the photo whose identity is `identity` (``identity(folder:path:bytes:)``).
    public func token(for identity: String) -> String {
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_BYTES))
        let message = Array("photobooth picture v1\0\(identity)".utf8)
        _ = crypto_auth_hmacsha256(&mac, message, UInt64(message.count), secret)
        return PictureTokens.base32(mac.prefix(16))
    }

    /// True when `text` has a token's shape (26 characters of the base32 alphabet): anything else is
    /// refused before the index is asked.
    public static func isWellFormed(_ text: some StringProtocol) -> Bool {
        text.utf8.count == tokenLength && text.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 50 && $0 <= 55) }
    }

    /// RFC 4648 base32, lower case, without padding.
    static func base32(_ bytes: some Collection<UInt8>) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567".utf8)
        var out: [UInt8] = [], buffer: UInt32 = 0, bits = 0
        for b in bytes {
            buffer = (buffer << 8) | UInt32(b)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: out, as: UTF8.self)
    }
}

import Crypto

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Reading P-256 public keys in the one form Web Push uses: 65 bytes, `0x04 || x || y`.
enum P256PublicKeyParsing {
    /// The key, or `nil` unless `bytes` is an uncompressed point on the curve.
    static func keyAgreementKey(_ bytes: Data) -> P256.KeyAgreement.PublicKey? {
        guard bytes.count == 65, bytes.first == 0x04 else { return nil }
        return try? P256.KeyAgreement.PublicKey(x963Representation: bytes)
    }

    /// The key, or `nil` unless `bytes` is an uncompressed point on the curve.
    static func signingKey(_ bytes: Data) -> P256.Signing.PublicKey? {
        guard bytes.count == 65, bytes.first == 0x04 else { return nil }
        return try? P256.Signing.PublicKey(x963Representation: bytes)
    }
}

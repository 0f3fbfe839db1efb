import FoundationEssentials
import Synchronization
import WebPush

/// The `Authorization` headers the gateway verified (RFC 8292), each kept with its credentials
/// until its token's `exp`, so that an app server that signs one token and sends it with many
/// pushes (pywebpush, the npm `web-push` package: 12 to 24 hours) costs one ECDSA verification,
/// not one per request.
///
/// Keyed by the whole header (token and key together): a cached answer is exactly the answer
/// ``VAPID/verify(authorizationHeader:expectedAudience:now:)`` gave for those bytes, for this
/// gateway's one audience. An entry is used only while `now` is before its `exp` (stricter than
/// the verification, which allows a minute of clock skew past it); after that the header is
/// verified again, and refused once the skew is spent. A header that failed is not kept.
/// Whether the key is the one the subscription registered is still checked on every request.
final class VerifiedVAPIDTokens: Sendable {
    /// The most headers kept; past it, the expired ones go, and if none has, all of them.
    static let capacity = 1024

    private let entries = Mutex<[String: VAPIDCredentials]>([:])

    /// The credentials of `header`: from an earlier verification while its token is unexpired,
    /// else verified now (and kept).
    ///
    /// - Throws: What ``VAPID/verify(authorizationHeader:expectedAudience:now:)`` throws.
    func credentials(for header: String, audience: String, now: Date) throws(WebPushError) -> VAPIDCredentials {
        if let cached = entries.withLock({ $0[header] }), now < cached.expiresAt { return cached }
        let credentials = try VAPID.verify(authorizationHeader: header, expectedAudience: audience, now: now)
        entries.withLock { entries in
            if entries.count >= Self.capacity {
                entries = entries.filter { now < $0.value.expiresAt }
                if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[header] = credentials
        }
        return credentials
    }
}

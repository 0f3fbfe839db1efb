import AppLifecycle
import FoundationEssentials
import LifecycledProtocol
import WebPush

/// What an app's push registration keeps between runs, in `remote-notifications.json` in its
/// state directory (mode 0600: the private key and auth secret decrypt its pushes).
///
/// The connector token is the same on every start, as UnifiedPush requires; the keys are the
/// ones the app's server encrypts to, so they outlive the endpoint (a new endpoint keeps them).
struct PushRegistrationState: Codable, Equatable, Sendable {
    /// The file's name in the app's state directory.
    static let fileName = "remote-notifications.json"

    /// The connector token (a UUID), chosen once.
    var token: String
    /// The P-256 private key, 32 bytes, base64url.
    var privateKey: String
    /// The auth secret, 16 bytes, base64url.
    var authSecret: String
    /// The distributor's well-known name the app registered with last.
    var distributor: String?
    /// The last endpoint the distributor gave.
    var endpoint: String?

    /// A fresh registration: a new token and new keys.
    static func generate() -> PushRegistrationState {
        let keys = WebPushKeys()
        return PushRegistrationState(
            token: UUID().uuidString.lowercased(), privateKey: Base64URL.encode(keys.privateKeyData),
            authSecret: Base64URL.encode(keys.authSecret))
    }

    /// The key material.
    func keys() throws -> WebPushKeys {
        guard let key = Base64URL.decode(privateKey), let secret = Base64URL.decode(authSecret) else {
            throw ApplicationError(.invalidInput, "\(Self.fileName): keys are not base64url")
        }
        do {
            return try WebPushKeys(privateKey: key, authSecret: secret)
        } catch {
            throw ApplicationError(.invalidInput, "\(Self.fileName): \(error)")
        }
    }

    /// The device token for an endpoint: the endpoint with the public key and auth secret.
    func deviceToken(endpoint: String) throws -> RemoteNotificationDeviceToken {
        let keys = try keys()
        guard let url = URL(string: endpoint) else {
            throw ApplicationError(.invalidInput, "the distributor's endpoint '\(endpoint)' is not a URL")
        }
        return try RemoteNotificationDeviceToken(endpoint: url, publicKey: keys.publicKey, authSecret: keys.authSecret)
    }

    /// Reads the state in `directory`; `nil` when there is none. A file that cannot be read is an error:
    /// the caller must not silently replace keys an app server may still encrypt to.
    static func load(from directory: URL) throws -> PushRegistrationState? {
        let url = directory.appendingPathComponent(fileName)
        let data: Data
        do {
            // A token, two keys and an endpoint: well under 64 KiB.
            data = try AtomicFile.read(from: url, limit: 64 << 10)
        } catch {
            if error.code == .notFound { return nil }
            throw ApplicationError(.io, "\(error)")
        }
        do {
            let state = try JSONDecoder().decode(PushRegistrationState.self, from: data)
            _ = try state.keys()
            guard !state.token.isEmpty, state.token.utf8.count <= UnifiedPush.maximumTokenLength else {
                throw ApplicationError(.invalidInput, "bad token")
            }
            return state
        } catch {
            throw ApplicationError(.invalidInput, "\(url.path) is not a push registration: \(error)")
        }
    }

    /// The file's contents (written by the connector's `GroupCommitFile`, off the main actor).
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try encoder.encode(self)
    }
}

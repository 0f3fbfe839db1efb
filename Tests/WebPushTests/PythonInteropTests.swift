import Crypto
import Foundation
import Testing
import WebPush

/// Interoperation with independent implementations from PyPI, pinned by scripts/webpush-venv.sh:
/// http-ece (the RFC 8188 / RFC 8291 reference code), pywebpush and py-vapid.
///
/// These tests fail (they do not skip) when the venv is missing; run scripts/webpush-venv.sh.
@Suite("Interop with pywebpush, http-ece and py-vapid")
struct PythonInteropTests {
    let keys = WebPushKeys()

    @Test("http_ece encrypts for our keys, one record or several; we decrypt", arguments: [4096, 40, 18] as [UInt32])
    func httpECEEncrypts(recordSize: UInt32) throws {
        let plaintext = Data((0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        let result = try PythonInterop.run(
            """
            import http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            sender = ec.generate_private_key(ec.SECP256R1())
            body = http_ece.encrypt(unb64(sys.argv[3]), private_key=sender, dh=unb64(sys.argv[1]),
                                    auth_secret=unb64(sys.argv[2]), rs=int(sys.argv[4]), version="aes128gcm")
            print(json.dumps({"body": b64(body)}))
            """,
            [
                Base64URL.encode(keys.publicKey), Base64URL.encode(keys.authSecret), Base64URL.encode(plaintext),
                String(recordSize),
            ])
        let body = try bytes(try #require(result["body"]))
        if recordSize < 4096 { #expect(body.count > 86 + Int(recordSize), "several records expected") }
        #expect(try WebPushEncryption.decrypt(body, keys: keys) == plaintext)
    }

    @Test("pywebpush's webpush() sends to our subscription: we verify its VAPID header and decrypt its body")
    func pywebpushSends() throws {
        let vapidKey = VAPIDSigningKey()
        let message = "Hello from pywebpush ☃"
        let result = try PythonInterop.run(
            """
            import os, shutil, tempfile
            from pywebpush import webpush
            subscription = {"endpoint": "https://push.example.net/wpush/v2/abc",
                            "keys": {"p256dh": sys.argv[1], "auth": sys.argv[2]}}
            directory = tempfile.mkdtemp()
            os.chdir(directory)  # webpush(curl=True) writes the body to ./encrypted.data
            try:
                command = webpush(subscription, sys.argv[3], vapid_private_key=sys.argv[4],
                                  vapid_claims={"sub": "mailto:ops@example.com"}, curl=True)
                with open("encrypted.data", "rb") as f:
                    body = f.read()
            finally:
                os.chdir("/")
                shutil.rmtree(directory)
            authorization = [line.split(": ", 1)[1].rstrip('" \\\\\\n') for line in command.splitlines()
                             if line.startswith('-H "authorization: ')][0]
            print(json.dumps({"authorization": authorization, "body": b64(body)}))
            """,
            [
                Base64URL.encode(keys.publicKey), Base64URL.encode(keys.authSecret), message,
                Base64URL.encode(vapidKey.rawRepresentation),
            ])
        let authorization = try #require(result["authorization"])
        let credentials = try VAPID.verify(
            authorizationHeader: authorization, expectedAudience: "https://push.example.net")
        #expect(credentials.publicKey == vapidKey.publicKey)
        #expect(credentials.subject == "mailto:ops@example.com")
        #expect(credentials.audience == "https://push.example.net")
        let body = try bytes(try #require(result["body"]))
        #expect(String(decoding: try WebPushEncryption.decrypt(body, keys: keys), as: UTF8.self) == message)
    }

    @Test("pywebpush's WebPusher.encode encrypts for our keys; we decrypt")
    func webPusherEncodes() throws {
        let result = try PythonInterop.run(
            """
            from pywebpush import WebPusher
            pusher = WebPusher({"endpoint": "https://push.example.net/x",
                                "keys": {"p256dh": sys.argv[1], "auth": sys.argv[2]}})
            print(json.dumps({"body": b64(pusher.encode(unb64(sys.argv[3]))["body"])}))
            """,
            [Base64URL.encode(keys.publicKey), Base64URL.encode(keys.authSecret), Base64URL.encode(Data("{}".utf8))])
        let body = try bytes(try #require(result["body"]))
        #expect(try WebPushEncryption.decrypt(body, keys: keys) == Data("{}".utf8))
    }

    /// What http_ece.decrypt makes of a body, given the receiver's private key and auth secret.
    func pythonDecrypts(_ body: Data) throws -> Data? {
        let result = try PythonInterop.run(
            """
            import http_ece
            from cryptography.hazmat.primitives.asymmetric import ec
            receiver = ec.derive_private_key(int.from_bytes(unb64(sys.argv[1]), "big"), ec.SECP256R1())
            plaintext = http_ece.decrypt(unb64(sys.argv[3]), private_key=receiver, auth_secret=unb64(sys.argv[2]),
                                         version="aes128gcm")
            print(json.dumps({"plaintext": b64(plaintext)}))
            """,
            [Base64URL.encode(keys.privateKeyData), Base64URL.encode(keys.authSecret), Base64URL.encode(body)])
        return result["plaintext"].flatMap(Base64URL.decode)
    }

    @Test("we encrypt, with and without padding; http_ece decrypts", arguments: [0, 1, 300])
    func weEncrypt(paddingLength: Int) throws {
        let plaintext = Data("Swift to Python, padded by \(paddingLength)".utf8)
        let body = try WebPushEncryption.encrypt(
            plaintext, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret, paddingLength: paddingLength)
        #expect(try pythonDecrypts(body) == plaintext)
    }

    @Test("our record layer's multi-record bodies decrypt in http_ece (nonce per sequence number)")
    func weEncryptRecords() throws {
        let sender = P256.KeyAgreement.PrivateKey()
        let ikm = try WebPushEncryption.senderInputKeyingMaterial(
            senderPrivateKey: sender, receiverPublicKey: keys.publicKey, authSecret: keys.authSecret)
        let plaintext = Data((0..<200).map { UInt8(truncatingIfNeeded: $0) })
        let body = try AES128GCMContentCoding.encrypt(
            plaintext, inputKeyingMaterial: ikm, salt: Data((0..<16).map { UInt8($0) }),
            keyID: sender.publicKey.x963Representation, recordSize: 50, padding: [3, 0, 10])
        #expect(try pythonDecrypts(body) == plaintext)
    }

    @Test("a py-vapid (Vapid02) header verifies with our VAPID.verify")
    func pyVapidSigns() throws {
        let result = try PythonInterop.run(
            """
            import time
            from py_vapid import Vapid02
            from cryptography.hazmat.primitives import serialization
            vapid = Vapid02()
            vapid.generate_keys()
            headers = vapid.sign({"aud": sys.argv[1], "sub": "mailto:ops@example.com", "exp": int(time.time()) + 600})
            key = vapid.public_key.public_bytes(serialization.Encoding.X962,
                                                serialization.PublicFormat.UncompressedPoint)
            print(json.dumps({"authorization": headers["Authorization"], "key": b64(key)}))
            """,
            ["http://127.0.0.1:8080"])
        let authorization = try #require(result["authorization"])
        let credentials = try VAPID.verify(
            authorizationHeader: authorization, expectedAudience: "http://127.0.0.1:8080")
        #expect(credentials.publicKey == (try bytes(try #require(result["key"]))))
        #expect(credentials.subject == "mailto:ops@example.com")
        #expect(credentials.expiresAt > Date())
        // The same header, for another origin, is refused.
        #expect(throws: WebPushError.self) {
            try VAPID.verify(authorizationHeader: authorization, expectedAudience: "http://127.0.0.1:8081")
        }
    }

    @Test("py-vapid's JWT decoder verifies our token with our k")
    func pyVapidVerifies() throws {
        let key = VAPIDSigningKey()
        let header = try key.authorization(audience: "https://push.example.net", subject: "mailto:ops@example.com")
        let token = try #require(header.split(separator: " ").dropFirst().first?.dropFirst(2).dropLast())
        let result = try PythonInterop.run(
            """
            from py_vapid import jwt
            claims = jwt.decode(sys.argv[1], sys.argv[2])
            print(json.dumps({"aud": claims["aud"], "sub": claims["sub"], "exp": str(claims["exp"])}))
            """,
            [String(token), key.publicKeyBase64URL])
        #expect(result["aud"] == "https://push.example.net")
        #expect(result["sub"] == "mailto:ops@example.com")
        #expect(result["exp"].flatMap { Double($0) }.map { $0 > Date().timeIntervalSince1970 } == true)
    }
}

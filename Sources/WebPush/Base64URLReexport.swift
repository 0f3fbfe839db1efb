// Base64URL lives in Base64URLCoding, a module without swift-crypto, so that FleetProtocol (and
// lifecycled through it) can read tokens and topics without linking BoringSSL. Web Push's keys,
// salts and tokens are base64url text, so WebPush's users get it with `import WebPush`, as before.
@_exported public import Base64URLCoding

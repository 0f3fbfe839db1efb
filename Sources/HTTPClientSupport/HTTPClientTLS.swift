import NIOCore
import NIOSSL

/// TLS for an ``HTTPClientConnection`` (swift-nio-ssl's `NIOSSLClientHandler`): the server's
/// certificate is verified against the system's trust roots, or against the CA certificates of one
/// PEM file (a private CA), and must name the host connected to (SNI carries the name; an IP
/// address is matched against the certificate's IP addresses).
///
/// Make one and reuse it: its `NIOSSLContext` reads the trust roots once.
package struct HTTPClientTLS: Sendable {
    /// Where the trusted CA certificates come from, for messages: a file's path, or the system's.
    package let trustSource: String
    /// How the person who reads an error names the CA file (`--ca-file`).
    let caFileOption: String
    let context: NIOSSLContext

    /// TLS that trusts the system's CA certificates, or only those of `caFile`.
    ///
    /// - Parameters:
    ///   - caFile: A PEM file of CA certificates (a private CA), or `nil` for the system's.
    ///   - caFileOption: How the caller's user gives a CA file (`--ca-file`): an untrusted
    ///     certificate's error says to give it there.
    /// - Throws: ``HTTPClientError`` (`invalidTLSConfiguration`) when the file cannot be read or
    ///   holds no certificate.
    package init(caFile: String? = nil, caFileOption: String = "the CA file") throws {
        self.caFileOption = caFileOption
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caFile {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(caFile)
            } catch {
                throw HTTPClientError(
                    .invalidTLSConfiguration, "cannot read CA certificates from \(caFile) (a PEM file is expected)",
                    underlying: error)
            }
            guard !certificates.isEmpty else {
                throw HTTPClientError(.invalidTLSConfiguration, "\(caFile) holds no PEM certificate")
            }
            configuration.trustRoots = .certificates(certificates)
            trustSource = caFile
        } else {
            trustSource = "the system's CA certificates"
        }
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw HTTPClientError(.invalidTLSConfiguration, "cannot set up TLS", underlying: error)
        }
    }

    /// The handler for a connection to `host` (SNI only for a name: an address literal has none).
    func makeHandler(host: String) throws -> NIOSSLClientHandler {
        let isAddress = (try? SocketAddress(ipAddress: host, port: 0)) != nil
        return try NIOSSLClientHandler(context: context, serverHostname: isAddress ? nil : host)
    }

    /// ``HTTPClientError/Code/certificateNotTrusted`` for a failed certificate check in `error`,
    /// with what to do about it; `nil` for any other error.
    func untrustedCertificate(in error: any Error, host: String) -> HTTPClientError? {
        let text = String(describing: error)
        if let extra = error as? NIOSSLExtraError, extra == .failedToValidateHostname {
            return HTTPClientError(
                .certificateNotTrusted,
                "the TLS certificate of \(host) is not issued for that name: connect to a name or address the certificate lists",
                underlying: error)
        }
        guard text.contains("CERTIFICATE_VERIFY_FAILED") || text.contains("certificate verify failed") else {
            return nil
        }
        return HTTPClientError(
            .certificateNotTrusted,
            "the TLS certificate of \(host) is not signed by a CA in \(trustSource): give the certificate of the CA that issued it (PEM) with \(caFileOption), or add that CA to the system's trust store",
            underlying: error)
    }
}

import Foundation
import Glibc
import SystemdBus

/// One HTTP/1.1 request over plain TCP and its response: what `lifecyclectl push` needs to POST
/// to a push gateway, no more. `http://` only (TLS belongs to a proxy or the load balancer in
/// front of the gateways); `Connection: close`, a `Content-Length` body, a 10 s time limit.
struct HTTPExchange: Sendable {
    /// A response.
    struct Response: Sendable {
        var status: Int
        var reason: String
        var headers: [String: String]
        var body: String
    }

    /// Why a request failed before a response came.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var method = "POST"
    var url: URL
    var headers: [(String, String)]
    var body: [UInt8]

    /// Sends it on a thread of its own (blocking socket calls) and returns the response.
    func send() async throws -> Response {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response, any Error>) in
            let started = DetachedThread.start {
                continuation.resume(with: Result { try sendBlocking() })
            }
            if started != 0 { continuation.resume(throwing: Failure(description: "no thread (errno \(started))")) }
        }
    }

    private func sendBlocking() throws -> Response {
        guard url.scheme == "http", let host = url.host else {
            throw Failure(description: "\(url) is not an http:// URL (put TLS in front of the gateway)")
        }
        let port = url.port ?? 80
        let fd = try connect(host: host, port: port)
        defer { close(fd) }
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let hostHeader = url.port.map { "\(bracketed):\($0)" } ?? bracketed
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(hostHeader)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\n\r\n"
        try writeAll(fd, Array(head.utf8) + body)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while received.count < 1 << 20 {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "reading the response: \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            received += buffer[0..<count]
        }
        return try Self.parse(received)
    }

    private func connect(host: String, port: Int) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let r = getaddrinfo(host, String(port), &hints, &list)
        guard r == 0, let first = list else {
            throw Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(r)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            if fd >= 0 {
                // The time limit covers the connect too (Linux applies SO_SNDTIMEO to it).
                var timeout = timeval(tv_sec: 10, tv_usec: 0)
                setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
                lastError = errno
                close(fd)
            }
            entry = info.pointee.ai_next
        }
        throw Failure(description: "cannot connect to \(host):\(port): \(String(cString: strerror(lastError)))")
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "sending the request: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Status line, headers (names lower-cased), and the body as text.
    static func parse(_ bytes: [UInt8]) throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0..<max(0, bytes.count - 3)).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "the server closed the connection without a complete response")
        }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines[0].split(separator: " ", maxSplits: 2)
        guard status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]) else {
            throw Failure(description: "not an HTTP response: \(lines[0].prefix(80))")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        return Response(
            status: code, reason: status.count > 2 ? String(status[2]) : "", headers: headers,
            body: String(decoding: bytes[(end + 4)...], as: UTF8.self))
    }
}

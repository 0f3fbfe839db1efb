import Foundation
import FoundationXML
import LifecycleDaemon
import LifecycledProtocol
import SystemdBus
import SystemdBusTesting
import Testing

/// One interface as introspection XML describes it: what an app in another language codes against.
struct IntrospectedInterface: Equatable, CustomStringConvertible {
    struct Member: Hashable, CustomStringConvertible {
        var kind: String
        var name: String
        /// `name:type:direction` per argument, or `type:access:EmitsChangedSignal` for a property.
        var details: [String]
        var description: String { "\(kind) \(name)(\(details.joined(separator: ", ")))" }
    }

    var members: Set<Member> = []
    var description: String { members.map(\.description).sorted().joined(separator: "\n") }

    /// Reads the interface `name` out of an introspection document, or `nil` if it has none.
    static func parse(_ xml: String, interface name: String) -> IntrospectedInterface? {
        final class Reader: NSObject, XMLParserDelegate {
            let wanted: String
            var inside = false
            var found = false
            var result = IntrospectedInterface()
            var current: Member?
            init(wanted: String) { self.wanted = wanted }

            func parser(
                _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]
            ) {
                switch element {
                case "interface":
                    inside = attributes["name"] == wanted
                    found = found || inside
                case "method",
                    "signal" where inside:
                    current = Member(kind: element, name: attributes["name"] ?? "", details: [])
                case "property" where inside:
                    current = Member(
                        kind: element, name: attributes["name"] ?? "",
                        details: [attributes["type"] ?? "", attributes["access"] ?? ""])
                case "arg" where inside:
                    let direction = attributes["direction"] ?? (current?.kind == "signal" ? "" : "in")
                    current?.details.append(
                        "\(attributes["name"] ?? ""):\(attributes["type"] ?? ""):\(direction)")
                case "annotation" where inside && current?.kind == "property":
                    if attributes["name"] == "org.freedesktop.DBus.Property.EmitsChangedSignal" {
                        current?.details.append(attributes["value"] ?? "")
                    }
                default: break
                }
            }

            func parser(
                _ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?
            ) {
                switch element {
                case "interface": inside = false
                case "method", "signal", "property":
                    if inside, let current { result.members.insert(current) }
                    current = nil
                default: break
                }
            }
        }
        let reader = Reader(wanted: name)
        let parser = XMLParser(data: Data(xml.utf8))
        parser.delegate = reader
        guard parser.parse(), reader.found else { return nil }
        return reader.result
    }
}

@Suite("lifecycled's introspection is the shipped interface file", .serialized, .timeLimit(.minutes(2)))
@MainActor
struct IntrospectionTests {
    @Test(
        "gdbus introspect of the running daemon shows exactly the members, arguments and properties of the XML file",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/gdbus"), "needs gdbus (libglib2.0-bin)"))
    func runningDaemonMatchesTheFile() async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(
                "dist/dbus-1/interfaces/org.applifecycle.Lifecycled1.xml")
        let shipped = try #require(
            IntrospectedInterface.parse(
                try String(contentsOf: file, encoding: .utf8), interface: LifecycledProtocol.interface))
        #expect(shipped.members.count == 25 + 4 + 4)
        try await withDaemon { (h: DaemonHarness) async throws in
            let result = try await runTool(
                "/usr/bin/gdbus",
                [
                    "introspect", "--address", h.bus.address, "--dest", LifecycledProtocol.busName,
                    "--object-path", LifecycledProtocol.objectPath, "--xml",
                ])
            #expect(result.status == 0, "\(result.stderr)")
            let running = try #require(
                IntrospectedInterface.parse(result.stdout, interface: LifecycledProtocol.interface), "\(result.stdout)")
            #expect(running == shipped, "running:\n\(running)\n\nshipped:\n\(shipped)")
        }
    }
}

import Foundation
import LifecycledProtocol
import Testing

@Suite("The shipped introspection XML of org.applifecycle.Lifecycled1")
struct InterfaceFileTests {
    /// `dist/dbus-1/interfaces/org.applifecycle.Lifecycled1.xml` in this checkout.
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("dist/dbus-1/interfaces/org.applifecycle.Lifecycled1.xml")
        .path

    @Test("the file is what LifecycledProtocol declares (LIFECYCLE_REGENERATE_INTERFACE=1 rewrites it)")
    func fileIsGenerated() throws {
        let generated = LifecycledProtocol.introspectionXML()
        if ProcessInfo.processInfo.environment["LIFECYCLE_REGENERATE_INTERFACE"] == "1" {
            try generated.write(toFile: Self.path, atomically: true, encoding: .utf8)
        }
        let shipped = try String(contentsOfFile: Self.path, encoding: .utf8)
        #expect(
            shipped == generated,
            "the interface changed: run LIFECYCLE_REGENERATE_INTERFACE=1 swift test --filter InterfaceFileTests")
    }

    @Test("every member is declared once, and signatures are the arguments' signatures in order")
    func declarationsAreConsistent() {
        let names =
            LifecycledProtocol.Method.allCases.map(\.name) + LifecycledProtocol.Signal.allCases.map(\.name)
            + LifecycledProtocol.Property.allCases.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(LifecycledProtocol.Method.registerApp.inSignature == "s")
        #expect(LifecycledProtocol.Method.registerApp.outSignature == "a{sv}a{sv}")
        #expect(LifecycledProtocol.Method.listApps.outSignature == "a(sssu)")
        #expect(LifecycledProtocol.Signal.command.signature == "ssa{sv}")
        for method in LifecycledProtocol.Method.allCases {
            #expect(Set(method.arguments.map(\.name)).count == method.arguments.count, "\(method)")
        }
    }
}

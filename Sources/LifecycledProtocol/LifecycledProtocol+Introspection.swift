extension LifecycledProtocol {
    /// The interface as D-Bus introspection XML: what `dist/dbus-1/interfaces/org.applifecycle.Lifecycled1.xml`
    /// holds and `make install` puts in `/usr/share/dbus-1/interfaces/`, for apps in other languages
    /// to generate their bindings from (`gdbus-codegen`, `qdbusxml2cpp`, `zbus-xmlgen`).
    ///
    /// Built from ``Method``, ``Signal`` and ``Property`` alone; a test holds the shipped file to it
    /// and the running daemon's own introspection to the file.
    public static func introspectionXML() -> String {
        // Names are D-Bus member and argument names and signatures are D-Bus type codes: neither can
        // hold a character XML would need escaped (`<`, `>`, `&`, `"`).
        func arg(_ argument: Argument, direction: String?) -> String {
            let direction = direction.map { " direction=\"\($0)\"" } ?? ""
            return "      <arg type=\"\(argument.signature)\" name=\"\(argument.name)\"\(direction)/>\n"
        }
        var xml = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <!-- org.applifecycle.Lifecycled1, served by lifecycled at \(objectPath) on the session bus.
                 Generated from the LifecycledProtocol module (LifecycledProtocol.introspectionXML()); do not edit. -->
            <node name="\(objectPath)">
              <interface name="\(interface)">

            """
        for method in Method.allCases {
            xml += "    <method name=\"\(method.name)\">\n"
            for argument in method.arguments { xml += arg(argument, direction: "in") }
            for result in method.results { xml += arg(result, direction: "out") }
            xml += "    </method>\n"
        }
        for signal in Signal.allCases {
            xml += "    <signal name=\"\(signal.name)\">\n"
            for argument in signal.arguments { xml += arg(argument, direction: nil) }
            xml += "    </signal>\n"
        }
        for property in Property.allCases {
            // `EmitsChangedSignal` defaults to true; like sd-bus, only the other values are written.
            let head = "    <property name=\"\(property.name)\" type=\"\(property.signature)\" access=\"read\""
            if property.isConstant {
                xml += head + ">\n"
                xml += "      <annotation name=\"org.freedesktop.DBus.Property.EmitsChangedSignal\" value=\"const\"/>\n"
                xml += "    </property>\n"
            } else {
                xml += head + "/>\n"
            }
        }
        xml += "  </interface>\n</node>\n"
        return xml
    }
}

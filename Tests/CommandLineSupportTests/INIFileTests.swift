import CommandLineSupport
import Testing

@Suite("INIFile: the project's one INI parser")
struct INIFileTests {
    @Test func sectionsKeysCommentsAndLines() throws {
        let file = try INIFile(
            parsing: """
                # comment
                ; comment
                [broker]
                url = mqtt://127.0.0.1:1883   # trailing comment
                password = a#b;c
                [empty]
                """, path: "x.conf")
        #expect(file.sections == ["broker": ["url": "mqtt://127.0.0.1:1883", "password": "a#b;c"], "empty": [:]])
        #expect(file.entries["broker"]?["password"]?.line == 5)
    }

    @Test(arguments: [
        ("url = x", "x.conf:1: a setting before any [section]"),
        ("[a]\nurl", "x.conf:2: 'url' is not key = value"),
        ("[a]\nurl =", "x.conf:2: 'url =' has an empty key or value"),
        ("[a]\nk = 1\nk = 2", "x.conf:3: 'k' is set twice in [a]"),
        ("[a", "x.conf:1: '[a' is not a [section]"),
    ])
    func badLinesAreNamed(text: String, message: String) {
        #expect {
            try INIFile(parsing: text, path: "x.conf")
        } throws: { error in
            let error = error as! INIFileError
            return error.code == .syntax && error.message == message
        }
    }

    @Test func aDirectoryIsNotReadAsAFile() {
        #expect {
            try INIFile(contentsOf: "/")
        } throws: { error in
            (error as! INIFileError).message == "/: not a regular file; point the option at the configuration file"
        }
    }
}

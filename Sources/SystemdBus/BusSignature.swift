/// Splitting D-Bus type signatures into their complete types.
enum BusSignature {
    /// The complete types of `signature` in order (`"sa{sv}u"` → `["s", "a{sv}", "u"]`), or `nil`
    /// if it is not a sequence of complete types.
    ///
    /// - Parameters:
    ///   - signature: A signature such as a method's input signature.
    static func completeTypes(of signature: String) -> [String]? {
        let characters = Array(signature.utf8)
        var types: [String] = []
        var index = 0
        while index < characters.count {
            guard let end = endOfCompleteType(characters, from: index) else { return nil }
            types.append(String(decoding: characters[index..<end], as: UTF8.self))
            index = end
        }
        return types
    }

    /// The index after the complete type starting at `start`, or `nil` if none starts there.
    private static func endOfCompleteType(_ characters: [UInt8], from start: Int) -> Int? {
        guard start < characters.count else { return nil }
        switch characters[start] {
        case UInt8(ascii: "a"):
            return endOfCompleteType(characters, from: start + 1)
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            let close = characters[start] == UInt8(ascii: "(") ? UInt8(ascii: ")") : UInt8(ascii: "}")
            var index = start + 1
            var fields = 0
            while index < characters.count, characters[index] != close {
                guard let end = endOfCompleteType(characters, from: index) else { return nil }
                index = end
                fields += 1
            }
            guard index < characters.count, fields > 0 else { return nil }
            return index + 1
        case let code where "ybnqiuxtdsoghv".utf8.contains(code):
            return start + 1
        default:
            return nil
        }
    }
}

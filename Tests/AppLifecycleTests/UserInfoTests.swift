import AppLifecycle
import Foundation
import Testing

@Suite("UserInfo values")
struct UserInfoTests {
    @Test("JSON round trip keeps every case, null, dates and bytes included")
    func roundTrip() throws {
        let info: UserInfo = [
            "s": "text", "i": 42, "d": 2.5, "b": true, "n": nil,
            "date": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
            "data": .data(Data([0, 1, 2, 255])),
            "nested": ["list": [1, "two", ["three": 3.5]]],
        ]
        let decoded = try UserInfo(json: info.json)
        #expect(decoded == info)
        #expect(info.nestingDepth == 3)
    }

    @Test("a JSON document that is not an object is refused with an error")
    func badJSON() {
        #expect(throws: DecodingError.self) { try UserInfo(json: "[1, 2]") }
        #expect(throws: (any Error).self) { try UserInfo(json: "{\"a\": ") }
    }

    @Test("JSON has one number type: a whole double comes back as an integer, with the same numeric value")
    func wholeDoubles() throws {
        let decoded = try UserInfo(json: UserInfo(["x": .double(3)]).json)
        #expect(decoded["x"] == .int(3))
        #expect(decoded["x"]?.doubleValue == 3)
    }

    @Test("numbers: whole doubles read as integers, integers as doubles")
    func numbers() {
        #expect(UserInfoValue.double(3).intValue == 3)
        #expect(UserInfoValue.double(3.5).intValue == nil)
        #expect(UserInfoValue.int(7).doubleValue == 7)
        #expect(UserInfoValue.string("7").intValue == nil)
    }

    @Test("a date in JSON is kept to the nearest millisecond and does not drift when saved again")
    func datesDoNotDriftAcrossSaves() throws {
        for millisecond in 0..<1000 {
            for extra in [0.0, 0.0003, -0.0003] {
                let seconds = 1_800_000_000 + Double(millisecond) / 1000 + extra
                let value = UserInfoValue.dictionary(["d": .date(Date(timeIntervalSince1970: seconds))])
                let once = try JSONDecoder().decode(UserInfoValue.self, from: JSONEncoder().encode(value))
                let twice = try JSONDecoder().decode(UserInfoValue.self, from: JSONEncoder().encode(once))
                let first = try #require(once.dictionaryValue?["d"]?.dateValue).timeIntervalSince1970
                let second = try #require(twice.dictionaryValue?["d"]?.dateValue).timeIntervalSince1970
                #expect(abs(first - seconds) <= 0.0005 + 1e-6, "\(seconds) became \(first)")
                #expect(first == second, "\(seconds): \(first) then \(second)")
            }
        }
    }
}

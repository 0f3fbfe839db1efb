import AppLifecycle
import Foundation
import Testing

@testable import lifecyclectl

@Suite("StateGraph: the state machine as lifecyclectl graph draws it")
struct StateGraphTests {
    @Test("the README's picture is current: docs/state-machine.dot is what lifecyclectl graph prints (make graph)")
    func committedGraphIsCurrent() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let committed = try String(contentsOf: root.appendingPathComponent("docs/state-machine.dot"), encoding: .utf8)
        #expect(committed == StateGraph.dot(), "run `make graph` and commit docs/state-machine.dot and .svg")
        let svg = try String(contentsOf: root.appendingPathComponent("docs/state-machine.svg"), encoding: .utf8)
        #expect(svg.contains("<title>ApplicationState</title>"))
        for state in ApplicationState.allCases {
            // Graphviz escapes the hyphen of not-running.
            let title = "<title>\(state.description.replacingOccurrences(of: "-", with: "&#45;"))</title>"
            #expect(svg.contains(title), "the SVG lacks \(state)")
        }
    }

    @Test func graphHasEveryLegalEdgeLabelled() {
        let dot = StateGraph.dot()
        #expect(dot.hasPrefix("digraph "))
        #expect(dot.hasSuffix("}\n"))
        let edges = dot.split(separator: "\n").filter { $0.contains(" -> ") }
        #expect(edges.count == ApplicationState.legalTransitions.count)
        for (from, to) in ApplicationState.legalTransitions {
            let edge = edges.first { $0.contains("\"\(from.rawValue)\" -> \"\(to.rawValue)\"") }
            #expect(edge != nil, "missing edge \(from) -> \(to)")
            for callback in StateGraph.callbacks(from: from, to: to) {
                #expect(edge?.contains(callback) == true, "\(from) -> \(to) lacks \(callback)")
            }
        }
        #expect(dot.contains("\"active\" -> \"inactive\" [label=\"applicationWillResignActive(_:)\"]"))
        #expect(dot.contains("\"background\" -> \"suspended\" [label=\"(no callback)\", style=dashed]"))
    }

    @Test func everyCallbackingTransitionIsKnown() {
        // Only the three silent system transitions have no callback.
        let silent = ApplicationState.legalTransitions.filter { StateGraph.isSilent(from: $0.from, to: $0.to) }
        #expect(
            silent.map { "\($0.from)->\($0.to)" }.sorted() == [
                "background->suspended", "suspended->background", "suspended->not-running",
            ])
    }
}

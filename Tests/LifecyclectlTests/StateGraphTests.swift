import AppLifecycle
import Testing

@testable import lifecyclectl

@Suite("StateGraph: the state machine as lifecyclectl graph draws it")
struct StateGraphTests {
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

import AppLifecycle

/// The app state machine as a graph: ``AppLifecycle/ApplicationState/legalTransitions`` with
/// the delegate callbacks each transition causes.
enum StateGraph {
    /// The delegate callbacks a transition causes, in the order they are called.
    ///
    /// The switch is exhaustive over the legal transitions so that a new one added to
    /// `ApplicationState` without a label here shows as `[]` in the graph and fails the test
    /// that every legal edge is labelled. Transitions the system makes without telling the
    /// app (suspension, a background wake, purging a suspended app) have no callback.
    ///
    /// - Parameters:
    ///   - from: The state left.
    ///   - to: The state entered.
    static func callbacks(from: ApplicationState, to: ApplicationState) -> [String] {
        switch (from, to) {
        case (.notRunning, .inactive):
            return ["application(_:willFinishLaunchingWithOptions:)", "application(_:didFinishLaunchingWithOptions:)"]
        case (.inactive, .active): return ["applicationDidBecomeActive(_:)"]
        case (.active, .inactive): return ["applicationWillResignActive(_:)"]
        case (.inactive, .background): return ["applicationDidEnterBackground(_:)"]
        case (.background, .inactive): return ["applicationWillEnterForeground(_:)"]
        case (.inactive, .notRunning), (.background, .notRunning): return ["applicationWillTerminate(_:)"]
        case (.background, .suspended), (.suspended, .background), (.suspended, .notRunning): return []
        default: return []
        }
    }

    /// Whether a legal transition happens without any callback (drawn dashed).
    ///
    /// - Parameters:
    ///   - from: The state left.
    ///   - to: The state entered.
    static func isSilent(from: ApplicationState, to: ApplicationState) -> Bool {
        callbacks(from: from, to: to).isEmpty
    }

    /// The DOT text: one node per state, one edge per legal transition.
    static func dot() -> String {
        var lines = [
            "digraph ApplicationState {",
            "  rankdir=LR;",
            "  node [shape=ellipse, fontname=\"Helvetica\"];",
            "  edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        for state in ApplicationState.allCases {
            let shape = state == .notRunning ? ", shape=doublecircle" : ""
            lines.append("  \(quoted(state.rawValue)) [label=\(quoted(state.rawValue))\(shape)];")
        }
        for (from, to) in ApplicationState.legalTransitions {
            let callbacks = callbacks(from: from, to: to)
            let label = callbacks.isEmpty ? "(no callback)" : callbacks.joined(separator: "\\n")
            let style = callbacks.isEmpty ? ", style=dashed" : ""
            lines.append("  \(quoted(from.rawValue)) -> \(quoted(to.rawValue)) [label=\(quoted(label))\(style)];")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    /// A DOT double-quoted string (`"` escaped; `\n` sequences already in the text are kept).
    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

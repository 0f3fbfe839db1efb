import ArgumentParser

/// `lifecyclectl graph`: prints the app state machine as a Graphviz DOT graph.
///
/// Needs no daemon: the graph comes from ``StateGraph``. Render it with
/// `lifecyclectl graph | dot -Tsvg > lifecycle.svg`.
struct Graph: ParsableCommand {
    /// The verb's name and help.
    static let configuration = CommandConfiguration(
        commandName: "graph",
        abstract: "Print the app state machine as a Graphviz DOT graph, edges labelled with the delegate callbacks.")

    /// Prints the DOT text.
    func run() {
        print(StateGraph.dot(), terminator: "")
    }
}

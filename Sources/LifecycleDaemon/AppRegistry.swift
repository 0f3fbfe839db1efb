import AppLifecycle
import SystemdBus

/// The daemon's apps, by id, in a stable order (manifests first, then registrations as they come).
///
/// Main-actor state of ``LifecycleDaemon``, holding each ``HostedApp`` by reference. Iteration
/// follows ``HostedApp/order`` so that commands, plans and listings are deterministic.
@MainActor
struct AppRegistry {
    private var apps: [String: HostedApp] = [:]
    private var nextOrder = 0

    /// Creates a registry holding one not-running entry per manifest.
    ///
    /// - Parameters:
    ///   - manifests: The loaded manifests.
    init(manifests: [AppManifest]) {
        for manifest in manifests { insert(id: manifest.id, manifest: manifest) }
    }

    /// The app with this id, if known.
    subscript(id: String) -> HostedApp? {
        get { apps[id] }
        set {
            if let newValue, apps[id] == nil, newValue.order >= nextOrder { nextOrder = newValue.order + 1 }
            apps[id] = newValue
        }
    }

    /// The entry of an id, or a new one (without a manifest) that is not stored until it is
    /// assigned with the subscript: a refused registration must leave no entry behind.
    func candidate(for id: String) -> HostedApp {
        apps[id] ?? HostedApp(id: id, manifest: nil, order: nextOrder)
    }

    /// How many apps without a manifest are known (each one registered by itself).
    var unknownCount: Int { apps.values.count { $0.manifest == nil } }

    /// Adds an entry at the end of the order.
    ///
    /// - Parameters:
    ///   - manifest: Its manifest, if any.
    @discardableResult
    private mutating func insert(id: String, manifest: AppManifest?) -> HostedApp {
        let app = HostedApp(id: id, manifest: manifest, order: nextOrder)
        nextOrder += 1
        apps[id] = app
        return app
    }

    /// Every app in order.
    var all: [HostedApp] { apps.values.sorted { $0.order < $1.order } }

    /// The registered apps in order.
    var registered: [HostedApp] { all.filter(\.isRegistered) }

    /// The app registered from a unique bus name, if any.
    ///
    /// - Parameters:
    ///   - busName: A unique name such as `:1.42`.
    func app(registeredFrom busName: String) -> HostedApp? {
        apps.values.first { $0.busName == busName }
    }

    /// The `a(sssu)` value of `ListApps` and `Apps`.
    var listValue: BusValue {
        .array(elementSignature: "(sssu)", all.map(\.listEntry))
    }
}

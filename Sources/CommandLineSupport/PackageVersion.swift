/// The version of AppLifecycle's programs, printed by `--version` and used for the Debian package
/// (the Makefile reads it from this file).
public enum PackageVersion {
    /// The release, `MAJOR.MINOR.PATCH`.
    public static let current = "0.9.0"
}

final class ExportedObject {}

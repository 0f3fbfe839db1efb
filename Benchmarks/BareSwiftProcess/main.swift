// The reference of `lifecycle-bench idle`: a Swift process that links what every Swift program on
// Linux links (the runtime, the concurrency runtime, Dispatch, FoundationEssentials) and does
// nothing. Built with the same flags as lifecycled, its RSS and PSS show what lifecycled itself adds.
import FoundationEssentials
import Glibc

let started = Date()
print("ready \(ProcessInfo.processInfo.processIdentifier) \(started.timeIntervalSince1970 > 0)")
fflush(nil)
while true { pause() }

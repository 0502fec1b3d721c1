#if canImport(Glibc)
    @preconcurrency import Glibc

    /// glibc functions Swift's Glibc module does not import (they need `_GNU_SOURCE`), looked up
    /// once by name.
    enum GNUExtensions {
        typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>?, Int32) -> Int32
        typealias AddCloseFrom =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        typealias AddChdir =
            @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, UnsafePointer<CChar>?)
            -> Int32
        typealias SetNamespace = @convention(c) (Int32, Int32) -> Int32

        /// pipe2(2) (glibc 2.9).
        static let pipe2: Pipe2? = function("pipe2")
        /// posix_spawn_file_actions_addclosefrom_np (glibc 2.34).
        static let addCloseFrom: AddCloseFrom? = function(
            "posix_spawn_file_actions_addclosefrom_np")
        /// posix_spawn_file_actions_addchdir_np (glibc 2.29).
        static let addChdir: AddChdir? = function("posix_spawn_file_actions_addchdir_np")
        /// setns(2) (glibc 2.14).
        static let setns: SetNamespace? = function("setns")

        private static func function<Function>(_ name: String) -> Function? {
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
            return unsafeBitCast(symbol, to: Function.self)
        }
    }
#endif

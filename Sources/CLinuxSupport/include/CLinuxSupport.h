#pragma once
#include <spawn.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * The Linux calls Swift's Glibc module does not export, each behind a plain (non-variadic) C function.
 *
 * Glibc's module map leaves out <sys/timerfd.h> and <sys/pidfd.h>, hides GNU extensions such as
 * mkostemp and posix_spawn_file_actions_addclosefrom_np (they need _GNU_SOURCE), and syscall(2) is
 * variadic, which Swift cannot call. Nothing here is about libsystemd: that lives in CSystemdShim.
 * Every function returns -1 and sets errno on failure, like the calls it wraps, unless it says otherwise.
 */

/// TFD_TIMER_ABSTIME from <sys/timerfd.h>.
extern const int cls_tfd_timer_abstime;
/// TFD_TIMER_CANCEL_ON_SET from <sys/timerfd.h>.
extern const int cls_tfd_timer_cancel_on_set;

/// timerfd_create(clock, TFD_CLOEXEC | TFD_NONBLOCK).
int cls_timerfd_create(clockid_t clock);

/// timerfd_settime(fd, flags, &{interval, value}, NULL).
int cls_timerfd_settime(int fd, int flags, struct timespec value, struct timespec interval);

/// mkostemp(template, flags): creates and opens a unique file from a template ending in "XXXXXX"
/// (rewritten in place) with O_RDWR | O_CREAT | O_EXCL | flags, so O_CLOEXEC is set atomically.
int cls_mkostemp(char *template_path, int flags);

/// pidfd_open(pid, flags) (Linux 5.3): an fd that refers to the process and polls readable
/// when it exits. The fd is close-on-exec.
int cls_pidfd_open(pid_t pid, unsigned int flags);

/// pidfd_send_signal(pidfd, sig, NULL, 0) (Linux 5.1): kill(2) without the pid-reuse race.
int cls_pidfd_send_signal(int pidfd, int sig);

/// Starts `path` with `argv` and `envp` through posix_spawn, set up the same way for every process
/// this project starts (lifecycled's apps, the test kit's bus daemons and mocks):
/// - /dev/null as stdin; `stdout_fd` and `stderr_fd` as stdout and stderr (-1: /dev/null; the same
///   fd twice is fine); every other fd from 3 up closed (posix_spawn_file_actions_addclosefrom_np);
/// - an empty signal mask and every catchable signal at its default disposition, whatever the
///   spawning thread (a Swift concurrency or event-loop thread) blocks or ignores;
/// - with `new_process_group`, a process group of its own.
/// Stores the pid in `*pid` and returns 0, or returns posix_spawn's error number (errno is not used).
int cls_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int stdout_fd, int stderr_fd,
              int new_process_group);

/// Starts `path` with `argv` and `envp` directly inside the cgroup v2 directory `cgroupfd`
/// (clone3 with CLONE_INTO_CGROUP, Linux 5.7), so that no process of the app, not even one
/// forked before exec, ever runs in the caller's cgroup.
///
/// The child gets what cls_spawn gives a process with a group of its own and no output: an empty
/// signal mask, every signal at its default disposition, a process group of its own, /dev/null as
/// stdin and no fd above 2. Between clone and exec it only makes async-signal-safe calls. An exec
/// failure is reported through a close-on-exec pipe and returned as the errno, like posix_spawn.
///
/// Returns the pid; -2 with errno set when clone3 itself failed (ENOSYS or E2BIG: no clone3
/// or CLONE_INTO_CGROUP; EACCES, EBUSY, EOPNOTSUPP: the cgroup does not take the process), so
/// the caller can fall back; -1 with errno set when the child's setup or its exec failed
/// (the child has then been reaped).
pid_t cls_spawn_into_cgroup(const char *path, char *const argv[], char *const envp[], int cgroupfd);

/// One symbol a loader resolves: its name and where its address goes.
struct cls_symbol {
    const char *name;
    void **address;
};

/// The one loader of the libraries the project uses only when a feature starts (libmosquitto,
/// libwayland-client, libxcb): `dlopen(soname, RTLD_NOW | RTLD_LOCAL)`, then every symbol's address
/// into its slot. Returns the library's handle, or NULL with dlerror's message (or the missing
/// symbol's name) in `error`; on a missing symbol the library is closed again.
void *cls_load_library(const char *soname, const struct cls_symbol *symbols, size_t count, char *error,
                       size_t error_size);

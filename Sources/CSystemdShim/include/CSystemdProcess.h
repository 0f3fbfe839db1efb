#pragma once
#include <spawn.h>
#include <sys/types.h>

/*
 * Process supervision helpers for lifecycled: only what Swift's Glibc module cannot call.
 *
 * Swift's Glibc does import waitid, P_PIDFD, siginfo_t and the CLD_* codes, so reaping stays
 * in Swift. It does not import pidfd_open / pidfd_send_signal (glibc declares them only in
 * <sys/pidfd.h>, since 2.36, which the Glibc module map leaves out; syscall(2) is variadic
 * and cannot be called from Swift) nor posix_spawn_file_actions_addclosefrom_np (a GNU
 * extension). These wrappers use syscall(2) so they also work with glibc < 2.36.
 * Every function returns -1 and sets errno on failure, like the system calls.
 */

/// pidfd_open(pid, flags) (Linux 5.3): an fd that refers to the process and polls readable
/// when it exits. The fd is close-on-exec.
int csp_pidfd_open(pid_t pid, unsigned int flags);

/// pidfd_send_signal(pidfd, sig, NULL, 0) (Linux 5.1): kill(2) without the pid-reuse race.
int csp_pidfd_send_signal(int pidfd, int sig);

/// posix_spawn_file_actions_addclosefrom_np(actions, lowfd) (glibc 2.34): the child closes
/// every fd >= lowfd before exec.
int csp_spawn_actions_closefrom(posix_spawn_file_actions_t *actions, int lowfd);

/// Starts `path` with `argv` and `envp` directly inside the cgroup v2 directory `cgroupfd`
/// (clone3 with CLONE_INTO_CGROUP, Linux 5.7), so that no process of the app, not even one
/// forked before exec, ever runs in the caller's cgroup.
///
/// The child gets what lifecycled's posix_spawn path gives it: an empty signal mask, every
/// signal at its default disposition, a process group of its own, /dev/null as stdin and no
/// fd above 2. Between clone and exec it only makes async-signal-safe calls. An exec failure
/// is reported through a close-on-exec pipe and returned as the errno, like posix_spawn.
///
/// Returns the pid; -2 with errno set when clone3 itself failed (ENOSYS or E2BIG: no clone3
/// or CLONE_INTO_CGROUP; EACCES, EBUSY, EOPNOTSUPP: the cgroup does not take the process), so
/// the caller can fall back; -1 with errno set when the child's setup or its exec failed
/// (the child has then been reaped).
pid_t csp_spawn_into_cgroup(const char *path, char *const argv[], char *const envp[], int cgroupfd);

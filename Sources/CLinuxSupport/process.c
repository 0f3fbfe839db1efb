#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include "CLinuxSupport.h"

int cls_pidfd_open(pid_t pid, unsigned int flags) {
        return (int)syscall(SYS_pidfd_open, pid, flags);
}

int cls_pidfd_send_signal(int pidfd, int sig) {
        return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int cls_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[], int stdout_fd, int stderr_fd,
              int new_process_group) {
        posix_spawn_file_actions_t actions;
        posix_spawnattr_t attributes;
        int r = posix_spawn_file_actions_init(&actions);
        if (r != 0) return r;
        r = posix_spawnattr_init(&attributes);
        if (r != 0) {
                posix_spawn_file_actions_destroy(&actions);
                return r;
        }
        if (r == 0) r = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        if (r == 0) {
                r = stdout_fd >= 0 ? posix_spawn_file_actions_adddup2(&actions, stdout_fd, 1)
                                   : posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
        }
        if (r == 0) {
                r = stderr_fd >= 0 ? posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2)
                                   : posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
        }
        /* Without it a test writing a script while another spawns a daemon leaves its write fd open
           in that daemon (exec of the script then fails with ETXTBSY), and an app inherits the
           daemon's bus sockets. */
        if (r == 0) r = posix_spawn_file_actions_addclosefrom_np(&actions, 3);

        sigset_t empty, defaults;
        sigemptyset(&empty);
        sigfillset(&defaults);
        sigdelset(&defaults, SIGKILL);
        sigdelset(&defaults, SIGSTOP);
        short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
        if (new_process_group) flags |= POSIX_SPAWN_SETPGROUP;
        if (r == 0) r = posix_spawnattr_setsigmask(&attributes, &empty);
        if (r == 0) r = posix_spawnattr_setsigdefault(&attributes, &defaults);
        if (r == 0 && new_process_group) r = posix_spawnattr_setpgroup(&attributes, 0);
        if (r == 0) r = posix_spawnattr_setflags(&attributes, flags);
        if (r == 0) r = posix_spawn(pid, path, &actions, &attributes, argv, envp);
        posix_spawnattr_destroy(&attributes);
        posix_spawn_file_actions_destroy(&actions);
        return r;
}

#include <fcntl.h>
#include <linux/sched.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* Reports errno to the parent through the pipe and exits; async-signal-safe. */
static void cls_child_fail(int report) {
        int code = errno;
        ssize_t n;
        do { n = write(report, &code, sizeof(code)); } while (n < 0 && errno == EINTR);
        _exit(127);
}

pid_t cls_spawn_into_cgroup(const char *path, char *const argv[], char *const envp[], int cgroupfd) {
        int report[2];
        if (pipe2(report, O_CLOEXEC) < 0) return -1;

        struct clone_args args;
        memset(&args, 0, sizeof(args));
        args.flags = CLONE_INTO_CGROUP;
        args.exit_signal = SIGCHLD;
        args.cgroup = (uint64_t)cgroupfd;

        long pid = syscall(SYS_clone3, &args, sizeof(args));
        if (pid < 0) {
                int code = errno;
                close(report[0]);
                close(report[1]);
                errno = code;
                return -2;
        }
        if (pid == 0) {
                /* The child: a copy of a multithreaded process, so only async-signal-safe calls. */
                close(report[0]);
                if (report[1] < 3) {
                        /* Keep the report fd clear of the stdio slots set up below. */
                        int moved = fcntl(report[1], F_DUPFD_CLOEXEC, 3);
                        if (moved < 0) cls_child_fail(report[1]);
                        report[1] = moved;
                }
                struct sigaction dfl;
                memset(&dfl, 0, sizeof(dfl));
                dfl.sa_handler = SIG_DFL;
                for (int sig = 1; sig < NSIG; sig++) {
                        if (sig != SIGKILL && sig != SIGSTOP) (void)sigaction(sig, &dfl, NULL);
                }
                sigset_t empty;
                sigemptyset(&empty);
                if (sigprocmask(SIG_SETMASK, &empty, NULL) < 0) cls_child_fail(report[1]);
                if (setpgid(0, 0) < 0) cls_child_fail(report[1]);
                int null = open("/dev/null", O_RDONLY);
                if (null < 0) cls_child_fail(report[1]);
                if (null != 0) {
                        if (dup2(null, 0) < 0) cls_child_fail(report[1]);
                        close(null);
                }
                /* Close every fd above 2 except the report pipe (close-on-exec itself). */
                if (report[1] > 3) (void)syscall(SYS_close_range, 3, report[1] - 1, 0);
                (void)syscall(SYS_close_range, report[1] + 1, ~0U, 0);
                execve(path, argv, envp);
                cls_child_fail(report[1]);
        }

        close(report[1]);
        int code = 0;
        ssize_t n;
        do { n = read(report[0], &code, sizeof(code)); } while (n < 0 && errno == EINTR);
        close(report[0]);
        if (n == (ssize_t)sizeof(code)) {
                /* The child failed before or at exec and has exited: reap it (it is ours). */
                int status;
                while (waitpid((pid_t)pid, &status, 0) < 0 && errno == EINTR) {}
                errno = code;
                return -1;
        }
        return (pid_t)pid;
}

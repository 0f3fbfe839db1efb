#define _GNU_SOURCE 1
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "CSystemdProcess.h"

int csp_pidfd_open(pid_t pid, unsigned int flags) {
        return (int)syscall(SYS_pidfd_open, pid, flags);
}

int csp_pidfd_send_signal(int pidfd, int sig) {
        return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int csp_spawn_actions_closefrom(posix_spawn_file_actions_t *actions, int lowfd) {
        int r = posix_spawn_file_actions_addclosefrom_np(actions, lowfd);
        if (r != 0) {
                errno = r;
                return -1;
        }
        return 0;
}

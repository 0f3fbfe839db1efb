#define _GNU_SOURCE 1
#include <stdlib.h>
#include <sys/timerfd.h>
#include "CLinuxSupport.h"

const int cls_tfd_timer_abstime = TFD_TIMER_ABSTIME;
const int cls_tfd_timer_cancel_on_set = TFD_TIMER_CANCEL_ON_SET;

int cls_timerfd_create(clockid_t clock) {
        return timerfd_create(clock, TFD_CLOEXEC | TFD_NONBLOCK);
}

int cls_timerfd_settime(int fd, int flags, struct timespec value, struct timespec interval) {
        struct itimerspec spec = { .it_interval = interval, .it_value = value };
        return timerfd_settime(fd, flags, &spec, NULL);
}

int cls_mkostemp(char *template_path, int flags) {
        return mkostemp(template_path, flags);
}

/* capsule/profile.c: the profile table, the seccomp filter built from it,
 * and the renderers a reviewer reads (see profile.h). */
#include "capsule/profile.h"
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/prctl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

/* Every namespace-creating clone flag. clone() carries the exit signal in
 * its low byte, where CLONE_NEWTIME's bit lives; time namespaces can only be
 * made with unshare/clone3, which are denied, so clone's mask leaves it out. */
#define NS_FLAGS_CLONE (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | \
	CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)

const char *const capsule_env[] = {
	"AILANG_FS_SANDBOX=/",
	"AILANG_RELAX_MODULES=1",
	"AILANG_CACHE_DIR=/.capsule-cache",
	NULL,
};

/* The allowlist shared by every profile: what a static C program
 * (ailang-lite, glibc) and the Go runtime need to start, allocate, run
 * threads, read their staged files, write their output and exit. */
static const struct capsule_syscall base_syscalls[] = {
	/* I/O on fds the capsule already has or opens under its root */
	{ "read", SC_ALLOW, 0, "read fds" }, { "write", SC_ALLOW, 0, "write fds" },
	{ "readv", SC_ALLOW, 0, "read fds" }, { "writev", SC_ALLOW, 0, "write fds" },
	{ "pread64", SC_ALLOW, 0, "read fds" }, { "pwrite64", SC_ALLOW, 0, "write fds" },
	{ "lseek", SC_ALLOW, 0, "seek" }, { "close", SC_ALLOW, 0, "close fds" },
	{ "close_range", SC_ALLOW, 0, "close fds before spawning" },
	{ "dup", SC_ALLOW, 0, "fd plumbing" }, { "dup2", SC_ALLOW, 0, "fd plumbing" },
	{ "dup3", SC_ALLOW, 0, "fd plumbing" }, { "fcntl", SC_ALLOW, 0, "fd flags" },
	{ "pipe", SC_ALLOW, 0, "pipes (Go netpoll, agent plumbing)" },
	{ "pipe2", SC_ALLOW, 0, "pipes (Go netpoll, agent plumbing)" },
	{ "eventfd2", SC_ALLOW, 0, "Go netpoll wakeup" },
	{ "poll", SC_ALLOW, 0, "wait on fds" }, { "ppoll", SC_ALLOW, 0, "wait on fds" },
	{ "select", SC_ALLOW, 0, "wait on fds" }, { "pselect6", SC_ALLOW, 0, "wait on fds" },
	{ "epoll_create1", SC_ALLOW, 0, "Go netpoll" }, { "epoll_ctl", SC_ALLOW, 0, "Go netpoll" },
	{ "epoll_wait", SC_ALLOW, 0, "Go netpoll" }, { "epoll_pwait", SC_ALLOW, 0, "Go netpoll" },
	{ "epoll_pwait2", SC_ALLOW, 0, "Go netpoll" },
	/* files under the capsule root (landlock and the mounts bound them) */
	{ "openat", SC_ALLOW, 0, "open staged files and the cache" },
	{ "open", SC_ALLOW, 0, "open staged files and the cache" },
	{ "fstat", SC_ALLOW, 0, "stat" }, { "stat", SC_ALLOW, 0, "stat" },
	{ "lstat", SC_ALLOW, 0, "stat" }, { "newfstatat", SC_ALLOW, 0, "stat" },
	{ "statx", SC_ALLOW, 0, "stat" }, { "fstatfs", SC_ALLOW, 0, "Go os.File" },
	{ "access", SC_ALLOW, 0, "probe files" }, { "faccessat", SC_ALLOW, 0, "probe files" },
	{ "faccessat2", SC_ALLOW, 0, "probe files" },
	{ "readlink", SC_ALLOW, 0, "resolve paths" }, { "readlinkat", SC_ALLOW, 0, "resolve paths" },
	{ "getdents64", SC_ALLOW, 0, "list directories" }, { "getcwd", SC_ALLOW, 0, "cwd" },
	{ "chdir", SC_ALLOW, 0, "cwd" }, { "fchdir", SC_ALLOW, 0, "cwd" },
	{ "mkdir", SC_ALLOW, 0, "cache dirs" }, { "mkdirat", SC_ALLOW, 0, "cache dirs" },
	{ "unlink", SC_ALLOW, 0, "cache files" }, { "unlinkat", SC_ALLOW, 0, "cache files" },
	{ "rename", SC_ALLOW, 0, "cache files" }, { "renameat", SC_ALLOW, 0, "cache files" },
	{ "renameat2", SC_ALLOW, 0, "cache files" }, { "rmdir", SC_ALLOW, 0, "cache dirs" },
	{ "ftruncate", SC_ALLOW, 0, "cache files" }, { "fsync", SC_ALLOW, 0, "cache files" },
	{ "fdatasync", SC_ALLOW, 0, "cache files" }, { "fchmod", SC_ALLOW, 0, "cache files" },
	{ "umask", SC_ALLOW, 0, "file mode mask" },
	/* memory */
	{ "brk", SC_ALLOW, 0, "heap" }, { "mmap", SC_ALLOW, 0, "heap, stacks" },
	{ "munmap", SC_ALLOW, 0, "heap" }, { "mprotect", SC_ALLOW, 0, "guard pages" },
	{ "mremap", SC_ALLOW, 0, "realloc" }, { "madvise", SC_ALLOW, 0, "Go scavenger" },
	{ "mincore", SC_ALLOW, 0, "Go runtime probe" },
	/* signals (landlock scoping and the pid namespace confine targets) */
	{ "rt_sigaction", SC_ALLOW, 0, "handlers" }, { "rt_sigprocmask", SC_ALLOW, 0, "masks" },
	{ "rt_sigreturn", SC_ALLOW, 0, "handler return" }, { "sigaltstack", SC_ALLOW, 0, "Go signal stacks" },
	{ "rt_sigtimedwait", SC_ALLOW, 0, "wait for signals" },
	{ "kill", SC_ALLOW, 0, "signal own processes (pid namespace)" },
	{ "tgkill", SC_ALLOW, 0, "Go preemption (SIGURG to own threads)" },
	{ "tkill", SC_ALLOW, 0, "signal own threads" },
	/* identity and time, read-only */
	{ "getpid", SC_ALLOW, 0, "ids" }, { "gettid", SC_ALLOW, 0, "ids" },
	{ "getppid", SC_ALLOW, 0, "ids" }, { "getuid", SC_ALLOW, 0, "ids" },
	{ "geteuid", SC_ALLOW, 0, "ids" }, { "getgid", SC_ALLOW, 0, "ids" },
	{ "getegid", SC_ALLOW, 0, "ids" }, { "getresuid", SC_ALLOW, 0, "ids" },
	{ "getresgid", SC_ALLOW, 0, "ids" }, { "getgroups", SC_ALLOW, 0, "ids" },
	{ "getpgrp", SC_ALLOW, 0, "ids" }, { "getpgid", SC_ALLOW, 0, "ids" },
	{ "getsid", SC_ALLOW, 0, "ids" },
	{ "capget", SC_ALLOW, 0, "read own capabilities (posture check)" },
	{ "uname", SC_ALLOW, 0, "libc and Go start-up" },
	{ "clock_gettime", SC_ALLOW, 0, "time" }, { "clock_getres", SC_ALLOW, 0, "time" },
	{ "gettimeofday", SC_ALLOW, 0, "time" }, { "time", SC_ALLOW, 0, "time" },
	{ "nanosleep", SC_ALLOW, 0, "sleep" }, { "pause", SC_ALLOW, 0, "sleep" }, { "clock_nanosleep", SC_ALLOW, 0, "sleep" },
	{ "getrusage", SC_ALLOW, 0, "own usage" }, { "times", SC_ALLOW, 0, "own usage" },
	{ "getrlimit", SC_ALLOW, 0, "read limits" },
	{ "prlimit64", SC_ALLOW, 0, "read or lower limits (soft = hard: raising needs a capability)" },
	{ "setrlimit", SC_ALLOW, 0, "lower limits (interpreter spawn)" },
	{ "getrandom", SC_ALLOW, 0, "randomness" },
	/* threads and processes (clone without namespace flags) */
	{ "clone", SC_ALLOW_CLONE, 0, "threads and children, never a new namespace" },
	{ "clone3", SC_ERRNO, ENOSYS, "flags are behind a pointer: ENOSYS makes libc and Go fall back to clone" },
	{ "execveat", SC_ALLOW_EXEC, 0, "only the pinned interpreter fd" },
	{ "sendmsg", SC_ALLOW_SETUP_SEND, 0, "only on fd 12, the close-on-exec setup channel that hands the listener to the supervisor" },
	{ "wait4", SC_ALLOW, 0, "reap children" }, { "waitid", SC_ALLOW, 0, "reap children" },
	{ "exit", SC_ALLOW, 0, "end thread" }, { "exit_group", SC_ALLOW, 0, "end process" },
	{ "futex", SC_ALLOW, 0, "locks" }, { "set_robust_list", SC_ALLOW, 0, "libc threads" },
	{ "get_robust_list", SC_ALLOW, 0, "libc threads" },
	{ "set_tid_address", SC_ALLOW, 0, "libc start-up" }, { "rseq", SC_ALLOW, 0, "glibc start-up" },
	{ "arch_prctl", SC_ALLOW, 0, "TLS (glibc, Go)" }, { "sched_yield", SC_ALLOW, 0, "Go scheduler" },
	{ "sched_getaffinity", SC_ALLOW, 0, "Go: count CPUs" },
	{ "ioctl", SC_ALLOW_IOCTL, 0, "only the listed commands (32-bit masked compare)" },
	{ "prctl", SC_ALLOW_PRCTL, 0, "only the listed options" },
	{ NULL, SC_ALLOW, 0, NULL },
};

/* The exec profile's allowlist: what gcc, make, python3, node
 * and go need to compile and run a project's tests -- processes and
 * execve, files of every kind under the writable mounts, sockets of the
 * local families (the network namespace is empty: loopback only), timers,
 * inotify, xattrs. Still absent (reported and killed): mount and the new
 * mount API, namespaces, ptrace and process_vm_*, bpf, keyctl and friends,
 * perf_event_open, userfaultfd, io_uring, module loading, kexec, reboot,
 * clock setting, set*id, capset, chroot, pivot_root, seccomp,
 * open_by_handle_at, personality, acct, quotactl, pidfd_getfd, fanotify,
 * ioperm/iopl, syslog, ioctls off the list (TIOCSTI among them). */
static const struct capsule_syscall exec_syscalls[] = {
	{ "read", SC_ALLOW, 0, "I/O" }, { "write", SC_ALLOW, 0, "I/O" }, { "readv", SC_ALLOW, 0, "I/O" },
	{ "writev", SC_ALLOW, 0, "I/O" }, { "pread64", SC_ALLOW, 0, "I/O" }, { "pwrite64", SC_ALLOW, 0, "I/O" },
	{ "preadv", SC_ALLOW, 0, "I/O" }, { "pwritev", SC_ALLOW, 0, "I/O" }, { "preadv2", SC_ALLOW, 0, "I/O" },
	{ "pwritev2", SC_ALLOW, 0, "I/O" }, { "lseek", SC_ALLOW, 0, "I/O" }, { "close", SC_ALLOW, 0, "fds" },
	{ "close_range", SC_ALLOW, 0, "fds" }, { "dup", SC_ALLOW, 0, "fds" }, { "dup2", SC_ALLOW, 0, "fds" },
	{ "dup3", SC_ALLOW, 0, "fds" }, { "fcntl", SC_ALLOW, 0, "fds" }, { "flock", SC_ALLOW, 0, "locks" },
	{ "pipe", SC_ALLOW, 0, "pipes" }, { "pipe2", SC_ALLOW, 0, "pipes" }, { "eventfd", SC_ALLOW, 0, "events" },
	{ "eventfd2", SC_ALLOW, 0, "events" }, { "poll", SC_ALLOW, 0, "wait" }, { "ppoll", SC_ALLOW, 0, "wait" },
	{ "select", SC_ALLOW, 0, "wait" }, { "pselect6", SC_ALLOW, 0, "wait" },
	{ "epoll_create", SC_ALLOW, 0, "wait" }, { "epoll_create1", SC_ALLOW, 0, "wait" },
	{ "epoll_ctl", SC_ALLOW, 0, "wait" }, { "epoll_wait", SC_ALLOW, 0, "wait" },
	{ "epoll_pwait", SC_ALLOW, 0, "wait" }, { "epoll_pwait2", SC_ALLOW, 0, "wait" },
	{ "inotify_init", SC_ALLOW, 0, "watchers (node, make -j tools)" },
	{ "inotify_init1", SC_ALLOW, 0, "watchers" }, { "inotify_add_watch", SC_ALLOW, 0, "watchers" },
	{ "inotify_rm_watch", SC_ALLOW, 0, "watchers" }, { "signalfd", SC_ALLOW, 0, "signals" },
	{ "signalfd4", SC_ALLOW, 0, "signals" }, { "timerfd_create", SC_ALLOW, 0, "timers" },
	{ "timerfd_settime", SC_ALLOW, 0, "timers" }, { "timerfd_gettime", SC_ALLOW, 0, "timers" },
	{ "sendfile", SC_ALLOW, 0, "copies" }, { "copy_file_range", SC_ALLOW, 0, "copies (cp)" },
	{ "splice", SC_ALLOW, 0, "copies" }, { "tee", SC_ALLOW, 0, "copies" },
	{ "fadvise64", SC_ALLOW, 0, "cp, sort" }, { "readahead", SC_ALLOW, 0, "I/O hints" },
	/* files (the mounts and landlock decide where) */
	{ "open", SC_ALLOW_MODE2, 0, "files; a mode with setuid/setgid refused, whatever the flags" },
	{ "openat", SC_ALLOW_MODE3, 0, "files; a mode with setuid/setgid refused, whatever the flags" },
	{ "openat2", SC_ERRNO, ENOSYS, "its mode is behind a pointer: ENOSYS, libc and runtimes fall back to openat" },
	{ "creat", SC_ALLOW_MODE1, 0, "files; never setuid/setgid" }, { "stat", SC_ALLOW, 0, "files" }, { "fstat", SC_ALLOW, 0, "files" },
	{ "lstat", SC_ALLOW, 0, "files" }, { "newfstatat", SC_ALLOW, 0, "files" }, { "statx", SC_ALLOW, 0, "files" },
	{ "statfs", SC_ALLOW, 0, "files" }, { "fstatfs", SC_ALLOW, 0, "files" }, { "access", SC_ALLOW, 0, "files" },
	{ "faccessat", SC_ALLOW, 0, "files" }, { "faccessat2", SC_ALLOW, 0, "files" },
	{ "readlink", SC_ALLOW, 0, "files" }, { "readlinkat", SC_ALLOW, 0, "files" },
	{ "getdents", SC_ALLOW, 0, "directories" }, { "getdents64", SC_ALLOW, 0, "directories" },
	{ "getcwd", SC_ALLOW, 0, "cwd" }, { "chdir", SC_ALLOW, 0, "cwd" }, { "fchdir", SC_ALLOW, 0, "cwd" },
	{ "mkdir", SC_ALLOW_MODE1, 0, "files; never setuid/setgid" }, { "mkdirat", SC_ALLOW_MODE2, 0, "files; never setuid/setgid" },
	{ "rmdir", SC_ALLOW, 0, "files" },
	{ "unlink", SC_ALLOW, 0, "files" }, { "unlinkat", SC_ALLOW, 0, "files" }, { "rename", SC_ALLOW, 0, "files" },
	{ "renameat", SC_ALLOW, 0, "files" }, { "renameat2", SC_ALLOW, 0, "files" }, { "link", SC_ALLOW, 0, "files" },
	{ "linkat", SC_ALLOW, 0, "files" }, { "symlink", SC_ALLOW, 0, "files" }, { "symlinkat", SC_ALLOW, 0, "files" },
	{ "mknod", SC_ALLOW_MODE1, 0, "fifos (no capability and landlock: never a device); never setuid/setgid" },
	{ "mknodat", SC_ALLOW_MODE2, 0, "fifos (no capability and landlock: never a device); never setuid/setgid" },
	{ "truncate", SC_ALLOW, 0, "files" }, { "ftruncate", SC_ALLOW, 0, "files" },
	{ "fallocate", SC_ALLOW, 0, "files" }, { "fsync", SC_ALLOW, 0, "files" }, { "fdatasync", SC_ALLOW, 0, "files" },
	{ "sync", SC_ALLOW, 0, "files" }, { "syncfs", SC_ALLOW, 0, "files" },
	{ "sync_file_range", SC_ALLOW, 0, "files" }, { "chmod", SC_ALLOW_MODE1, 0, "modes; never setuid/setgid (as root the files are root's on the host)" },
	{ "fchmod", SC_ALLOW_MODE1, 0, "modes; never setuid/setgid" }, { "fchmodat", SC_ALLOW_MODE2, 0, "modes; never setuid/setgid" },
	{ "fchmodat2", SC_ALLOW_MODE2, 0, "modes (glibc's lchmod); never setuid/setgid" },
	{ "chown", SC_ALLOW, 0, "own files only (no capability)" }, { "fchown", SC_ALLOW, 0, "own files only" },
	{ "lchown", SC_ALLOW, 0, "own files only" }, { "fchownat", SC_ALLOW, 0, "own files only" },
	{ "utime", SC_ALLOW, 0, "times (make)" }, { "utimes", SC_ALLOW, 0, "times" },
	{ "utimensat", SC_ALLOW, 0, "times" }, { "futimesat", SC_ALLOW, 0, "times" },
	{ "umask", SC_ALLOW, 0, "modes" }, { "getxattr", SC_ALLOW, 0, "xattrs (cp -a, shutil)" },
	{ "lgetxattr", SC_ALLOW, 0, "xattrs" }, { "fgetxattr", SC_ALLOW, 0, "xattrs" },
	{ "listxattr", SC_ALLOW, 0, "xattrs" }, { "llistxattr", SC_ALLOW, 0, "xattrs" },
	{ "flistxattr", SC_ALLOW, 0, "xattrs" }, { "setxattr", SC_ALLOW, 0, "xattrs (user.* only without capability)" },
	{ "lsetxattr", SC_ALLOW, 0, "xattrs" }, { "fsetxattr", SC_ALLOW, 0, "xattrs" },
	{ "removexattr", SC_ALLOW, 0, "xattrs" }, { "lremovexattr", SC_ALLOW, 0, "xattrs" },
	{ "fremovexattr", SC_ALLOW, 0, "xattrs" },
	/* memory */
	{ "brk", SC_ALLOW, 0, "heap" }, { "mmap", SC_ALLOW, 0, "memory" }, { "munmap", SC_ALLOW, 0, "memory" },
	{ "mprotect", SC_ALLOW, 0, "memory (JITs)" }, { "pkey_mprotect", SC_ALLOW, 0, "memory (V8)" },
	{ "pkey_alloc", SC_ALLOW, 0, "memory protection keys (node/V8)" }, { "pkey_free", SC_ALLOW, 0, "memory protection keys" },
	{ "mremap", SC_ALLOW, 0, "memory" }, { "madvise", SC_ALLOW, 0, "memory" }, { "mincore", SC_ALLOW, 0, "memory" },
	{ "msync", SC_ALLOW, 0, "memory" }, { "mlock", SC_ALLOW, 0, "RLIMIT_MEMLOCK 0" },
	{ "mlock2", SC_ALLOW, 0, "RLIMIT_MEMLOCK 0" }, { "munlock", SC_ALLOW, 0, "memory" },
	{ "mlockall", SC_ALLOW, 0, "RLIMIT_MEMLOCK 0" }, { "munlockall", SC_ALLOW, 0, "memory" },
	{ "membarrier", SC_ALLOW, 0, "V8, Go" }, { "memfd_create", SC_ALLOW, 0, "anonymous files (V8, tests)" },
	{ "get_mempolicy", SC_ALLOW, 0, "NUMA queries" },
	/* signals, in the capsule's pid namespace (and landlock's signal scope) */
	{ "rt_sigaction", SC_ALLOW, 0, "signals" }, { "rt_sigprocmask", SC_ALLOW, 0, "signals" },
	{ "rt_sigreturn", SC_ALLOW, 0, "signals" }, { "sigaltstack", SC_ALLOW, 0, "signals" },
	{ "restart_syscall", SC_ALLOW, 0, "the kernel's resumption of a sleep a stop or a handlerless signal interrupted (seen killing go test under load)" },
	{ "rt_sigtimedwait", SC_ALLOW, 0, "signals" }, { "rt_sigpending", SC_ALLOW, 0, "signals" },
	{ "rt_sigsuspend", SC_ALLOW, 0, "signals" }, { "rt_sigqueueinfo", SC_ALLOW, 0, "signals" },
	{ "rt_tgsigqueueinfo", SC_ALLOW, 0, "signals" }, { "kill", SC_ALLOW, 0, "own pid namespace" },
	{ "tgkill", SC_ALLOW, 0, "threads" }, { "tkill", SC_ALLOW, 0, "threads" },
	{ "pidfd_open", SC_ALLOW, 0, "own pid namespace" }, { "pidfd_send_signal", SC_ALLOW, 0, "own pid namespace" },
	/* identity, time, scheduling (read, or lowering only) */
	{ "getpid", SC_ALLOW, 0, "ids" }, { "gettid", SC_ALLOW, 0, "ids" }, { "getppid", SC_ALLOW, 0, "ids" },
	{ "getuid", SC_ALLOW, 0, "ids" }, { "geteuid", SC_ALLOW, 0, "ids" }, { "getgid", SC_ALLOW, 0, "ids" },
	{ "getegid", SC_ALLOW, 0, "ids" }, { "getresuid", SC_ALLOW, 0, "ids" }, { "getresgid", SC_ALLOW, 0, "ids" },
	{ "getgroups", SC_ALLOW, 0, "ids" }, { "getpgrp", SC_ALLOW, 0, "ids" }, { "getpgid", SC_ALLOW, 0, "ids" },
	{ "getsid", SC_ALLOW, 0, "ids" }, { "setpgid", SC_ALLOW, 0, "job control (make, shells)" },
	{ "setuid", SC_ALLOW, 0, "no capability: only among the capsule's own ids (make resets them)" },
	{ "setgid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setreuid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setregid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setresuid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setresgid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setfsuid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setfsgid", SC_ALLOW, 0, "no capability: only among the capsule's own ids" },
	{ "setsid", SC_ALLOW, 0, "sessions (daemons die with the capsule)" },
	{ "capget", SC_ALLOW, 0, "read capabilities (none)" }, { "uname", SC_ALLOW, 0, "system name" },
	{ "sysinfo", SC_ALLOW, 0, "memory size (node, go)" }, { "getcpu", SC_ALLOW, 0, "cpu" },
	{ "clock_gettime", SC_ALLOW, 0, "time" }, { "clock_getres", SC_ALLOW, 0, "time" },
	{ "gettimeofday", SC_ALLOW, 0, "time" }, { "time", SC_ALLOW, 0, "time" },
	{ "nanosleep", SC_ALLOW, 0, "sleep" }, { "clock_nanosleep", SC_ALLOW, 0, "sleep" },
	{ "pause", SC_ALLOW, 0, "sleep" }, { "alarm", SC_ALLOW, 0, "timers" },
	{ "getitimer", SC_ALLOW, 0, "timers" }, { "setitimer", SC_ALLOW, 0, "timers" },
	{ "timer_create", SC_ALLOW, 0, "timers" }, { "timer_settime", SC_ALLOW, 0, "timers" },
	{ "timer_gettime", SC_ALLOW, 0, "timers" }, { "timer_getoverrun", SC_ALLOW, 0, "timers" },
	{ "timer_delete", SC_ALLOW, 0, "timers" }, { "getrusage", SC_ALLOW, 0, "usage" },
	{ "times", SC_ALLOW, 0, "usage" }, { "getrlimit", SC_ALLOW, 0, "limits" },
	{ "prlimit64", SC_ALLOW, 0, "limits (raising needs a capability)" },
	{ "setrlimit", SC_ALLOW, 0, "limits (raising needs a capability)" },
	{ "getpriority", SC_ALLOW, 0, "nice" }, { "setpriority", SC_ALLOW, 0, "nice (raising needs a capability)" },
	{ "sched_yield", SC_ALLOW, 0, "scheduler" }, { "sched_getaffinity", SC_ALLOW, 0, "count CPUs" },
	{ "sched_setaffinity", SC_ALLOW, 0, "pin threads" }, { "sched_getparam", SC_ALLOW, 0, "scheduler" },
	{ "sched_getscheduler", SC_ALLOW, 0, "scheduler" }, { "sched_get_priority_max", SC_ALLOW, 0, "scheduler" },
	{ "sched_get_priority_min", SC_ALLOW, 0, "scheduler" }, { "getrandom", SC_ALLOW, 0, "randomness" },
	/* processes and threads */
	{ "clone", SC_ALLOW_CLONE, 0, "processes and threads, never a new namespace" },
	{ "clone3", SC_ERRNO, ENOSYS, "flags behind a pointer: ENOSYS, libc and Go fall back to clone" },
	{ "fork", SC_ALLOW, 0, "processes" }, { "vfork", SC_ALLOW, 0, "processes (posix_spawn)" },
	{ "execve", SC_ALLOW, 0, "toolchains run compilers and sub-processes (mounts, landlock bound what)" },
	{ "execveat", SC_ALLOW, 0, "the command itself (by fd) and sub-processes" },
	{ "wait4", SC_ALLOW, 0, "reap" }, { "waitid", SC_ALLOW, 0, "reap" }, { "exit", SC_ALLOW, 0, "end" },
	{ "exit_group", SC_ALLOW, 0, "end" }, { "futex", SC_ALLOW, 0, "locks" },
	{ "futex_waitv", SC_ALLOW, 0, "locks" }, { "set_robust_list", SC_ALLOW, 0, "threads" },
	{ "get_robust_list", SC_ALLOW, 0, "threads" }, { "set_tid_address", SC_ALLOW, 0, "threads" },
	{ "rseq", SC_ALLOW, 0, "glibc" }, { "arch_prctl", SC_ALLOW, 0, "TLS" },
	{ "ioctl", SC_ALLOW_IOCTL, 0, "only the listed commands (32-bit masked compare)" },
	{ "prctl", SC_ALLOW_PRCTL, 0, "only the listed options" },
	/* sockets: the network namespace is the capsule's own, with loopback only */
	{ "socket", SC_ALLOW_SOCKET, 0, "AF_UNIX, AF_INET, AF_INET6 (own namespace: loopback only)" },
	{ "socketpair", SC_ALLOW_SOCKET, 0, "AF_UNIX (AF_INET families fail in the kernel)" },
	{ "connect", SC_ALLOW, 0, "local sockets" }, { "bind", SC_ALLOW, 0, "local sockets" },
	{ "listen", SC_ALLOW, 0, "local sockets" }, { "accept", SC_ALLOW, 0, "local sockets" },
	{ "accept4", SC_ALLOW, 0, "local sockets" }, { "shutdown", SC_ALLOW, 0, "local sockets" },
	{ "sendto", SC_ALLOW, 0, "local sockets" }, { "recvfrom", SC_ALLOW, 0, "local sockets" },
	{ "sendmsg", SC_ALLOW, 0, "local sockets (also the setup channel's handover)" },
	{ "recvmsg", SC_ALLOW, 0, "local sockets" }, { "sendmmsg", SC_ALLOW, 0, "local sockets" },
	{ "recvmmsg", SC_ALLOW, 0, "local sockets" }, { "getsockname", SC_ALLOW, 0, "local sockets" },
	{ "getpeername", SC_ALLOW, 0, "local sockets" }, { "getsockopt", SC_ALLOW, 0, "local sockets" },
	{ "setsockopt", SC_ALLOW, 0, "local sockets" },
	{ NULL, SC_ALLOW, 0, NULL },
};

static const char *const exec_denied_list[] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "userfaultfd",
	"keyctl", "add_key", "request_key", "perf_event_open", "unshare", "setns",
	"mount", "umount2", "pivot_root", "chroot", "open_by_handle_at", "name_to_handle_at",
	"ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "kexec_file_load", "init_module",
	"finit_module", "delete_module", "reboot", "swapon", "swapoff", "clock_settime", "clock_adjtime",
	"settimeofday", "adjtimex", "sethostname", "setdomainname", "seccomp", "setgroups", "capset",
	"personality", "acct", "quotactl", "pidfd_getfd", "fanotify_init", "move_mount", "fsopen",
	"fsmount", "fsconfig", "fspick", "open_tree", "mount_setattr", "ioperm", "iopl", "syslog",
	"vhangup", "lookup_dcookie", "migrate_pages", "move_pages", "mbind", "set_mempolicy",
	"process_madvise", "kcmp", "landlock_create_ruleset", "sched_setscheduler", "sched_setparam",
	"ioprio_set", "io_setup", "io_submit", "socket(AF_NETLINK): EAFNOSUPPORT; AF_PACKET, AF_VSOCK, ...: reported",
	"ioctl(TIOCSTI) and every command off the list", NULL,
};

/* ioctls of toolchains: terminal queries (none is a terminal: stdin is
 * /dev/null, there is no controlling terminal), fd flags, reflink copies
 * (coreutils cp), file flags. TIOCSTI, TIOCLINUX, TIOCSCTTY: not listed. */
static const unsigned long exec_ioctl_cmds[] = {
	0x5401 /* TCGETS */, 0x5413 /* TIOCGWINSZ */, 0x541B /* FIONREAD */, 0x5421 /* FIONBIO */,
	0x5451 /* FIOCLEX */, 0x5450 /* FIONCLEX */, 0x540F /* TIOCGPGRP */, 0x5452 /* FIOASYNC */,
	0x40049409 /* FICLONE */, 0x4020940D /* FICLONERANGE */, 0x80086601 /* FS_IOC_GETFLAGS */, 0,
};

static const int exec_prctl_options[] = {
	PR_GET_SECCOMP, PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ, PR_GET_SECUREBITS, PR_GET_DUMPABLE,
	PR_GET_KEEPCAPS, PR_SET_NAME, PR_GET_NAME, PR_SET_PDEATHSIG, PR_GET_PDEATHSIG,
	PR_SET_CHILD_SUBREAPER, PR_GET_CHILD_SUBREAPER, PR_SET_NO_NEW_PRIVS, PR_SET_TIMERSLACK,
	PR_GET_TIMERSLACK, PR_SET_VMA, -1,
};

/* Documented for the reviewer: each is absent from the allowlist, so the
 * default action (report + kill) stops it. The escape suite probes them. */
static const char *const denied_list[] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register", "bpf", "userfaultfd",
	"keyctl", "add_key", "request_key", "perf_event_open", "unshare", "setns",
	"mount", "umount2", "pivot_root", "chroot", "open_by_handle_at", "name_to_handle_at",
	"ptrace", "process_vm_readv", "process_vm_writev", "kexec_load", "init_module",
	"finit_module", "delete_module", "reboot", "swapon", "mknod", "mknodat",
	"clock_settime", "settimeofday", "sethostname", "socket", "socketpair", "execve",
	"memfd_create", "seccomp", "setuid", "setgid", "setresuid", "setgroups", "capset",
	"personality", "acct", "quotactl", "pidfd_getfd", "fanotify_init", "move_mount",
	"fsopen", "open_tree", "mount_setattr", "sendto", "recvmsg", NULL,
};

static const unsigned long ioctl_cmds[] = {
	0x5401 /* TCGETS */, 0x5413 /* TIOCGWINSZ */, 0x541B /* FIONREAD */,
	0x5421 /* FIONBIO */, 0x5451 /* FIOCLEX */, 0x5450 /* FIONCLEX */, 0,
};

static const struct { unsigned long cmd; const char *name; } ioctl_names[] = {
	{ 0x5401, "TCGETS" }, { 0x5402, "TCSETS" }, { 0x5412, "TIOCSTI" },
	{ 0x5413, "TIOCGWINSZ" }, { 0x541B, "FIONREAD" }, { 0x541C, "TIOCLINUX" },
	{ 0x5421, "FIONBIO" }, { 0x5451, "FIOCLEX" }, { 0x5450, "FIONCLEX" },
	{ 0x540E, "TIOCSCTTY" }, { 0x540F, "TIOCGPGRP" }, { 0x5452, "FIOASYNC" }, { 0x40049409, "FICLONE" },
	{ 0x4020940D, "FICLONERANGE" }, { 0x80086601, "FS_IOC_GETFLAGS" }, { 0, NULL },
};

const char *capsule_ioctl_name(unsigned long cmd)
{
	for (size_t i = 0; ioctl_names[i].name; i++)
		if (ioctl_names[i].cmd == (cmd & 0xffffffffUL)) return ioctl_names[i].name;
	return NULL;
}

/* Read-only queries (the posture check reads its own state) and naming a thread. */
static const int prctl_options[] = {
	PR_GET_SECCOMP, PR_GET_NO_NEW_PRIVS, PR_CAPBSET_READ, PR_GET_SECUREBITS,
	PR_GET_DUMPABLE, PR_GET_KEEPCAPS, PR_SET_NAME, PR_GET_NAME, -1,
};

static const char *const transition_argv[] = {
	"run", "--quiet", "--caps", "", "--entry", "main", "--args-file", "args.json",
	"host/capsule/main.ail", NULL,
};
static const char *const check_argv[] = { "check", "host/capsule/main.ail", NULL };
static const char *const staged_transition[] = {
	"host/capsule/main.ail", "args.json", ".capsule-cache/", NULL,
};
/* The finish phase of an effectful call rewrites args.json in place, so
 * that it runs exactly like the plan phase (cwd = root, --args-file
 * args.json); everything else in the root stays read-only. */
static const char *const writable_transition[] = { "args.json", NULL };
static const char *const staged_check[] = { "host/capsule/main.ail", ".capsule-cache/", NULL };
static const char *const tool_devices[] = { "/dev/null", "/dev/zero", "/dev/urandom", NULL };

#define MiB (1024ULL * 1024ULL)
#define ALL_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | \
	CLONE_NEWUTS | CLONE_NEWCGROUP)


/* The exec capsule's fixed root (capsule/exec_capsule.c builds it). */
static const char *const exec_system[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", NULL,
};
/* Secrets a host keeps under /etc. Root-started capsules run as an unmapped
 * host id and read only what "others" may (shadow is 0640 root:shadow), an
 * unprivileged caller's capsule reads what the caller may; the masks hold
 * either way. */
static const char *const exec_etc_masked[] = {
	"shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "sudoers.d", "security/opasswd",
	"ssh/ssh_host_rsa_key", "ssh/ssh_host_ecdsa_key", "ssh/ssh_host_ed25519_key", "ssh/ssh_host_dsa_key",
	"ssl/private", "krb5.keytab", "credstore", "credstore.encrypted", "wireguard", "ipsec.secrets",
	"ppp/chap-secrets", "ppp/pap-secrets", "NetworkManager/system-connections", "letsencrypt",
	"mysql/debian.cnf", "postgresql-common/pg_service.conf", "libvirt/secrets", "docker/key.json",
	"world", /* the daemon's own: docs/operations.md keeps its store password file in /etc/world */
	NULL,
};
static const char *const exec_devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", NULL,
};
#define LL_RX (CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_READ_DIR | CAPSULE_LL_FS_EXECUTE)
#define LL_RWX (LL_RX | CAPSULE_LL_FS_WRITE_FILE | CAPSULE_LL_FS_REMOVE_DIR | CAPSULE_LL_FS_REMOVE_FILE | \
	CAPSULE_LL_FS_MAKE_DIR | CAPSULE_LL_FS_MAKE_REG | CAPSULE_LL_FS_MAKE_SOCK | CAPSULE_LL_FS_MAKE_FIFO | \
	CAPSULE_LL_FS_MAKE_SYM | CAPSULE_LL_FS_REFER | CAPSULE_LL_FS_TRUNCATE)
static const struct capsule_exec_layout exec_layout = {
	.system = exec_system, .etc_masked = exec_etc_masked, .devices = exec_devices,
	.tmp_size = 512 * 1024 * 1024ULL,
	.ll_system = LL_RX, .ll_write = LL_RWX,
	.ll_proc = CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_READ_DIR,
	.ll_dev = CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_WRITE_FILE | CAPSULE_LL_FS_IOCTL_DEV,
};

const struct capsule_profile capsule_profiles[] = {
	{
		.name = "transition",
		.purpose = "one pure transition run (or one phase of an effectful one): "
		           "main(input) over args.json, output on stdout",
		.namespaces = ALL_NS, .argv = transition_argv, .staged = staged_transition,
		.writable = writable_transition,
		.devices = NULL, .hostname = "capsule",
		.limits = { .wall_ms = 4000, .rlim_as = 1024 * MiB, .rlim_data = 512 * MiB,
		            .rlim_cpu_s = 5, .rlim_fsize = 16 * MiB, .rlim_nofile = 64,
		            .rlim_nproc = 64, .rlim_stack = 8 * MiB, .cg_memory = 256 * MiB,
		            .cg_pids = 64, .root_size = 4 * MiB, .cache_size = 16 * MiB,
		            .stdout_cap = 8 * MiB, .stderr_cap = 8 * MiB, .output_cap = 1 * MiB,
		            .args_cap = 1 * MiB },
		.syscalls = base_syscalls, .denied_explicitly = denied_list,
		.ioctl_cmds = ioctl_cmds, .prctl_options = prctl_options, .landlock = 1,
	},
	{
		.name = "source-check",
		.purpose = "bounded source check (BIN check FILE) in an empty scratch root; never executes the source",
		.namespaces = ALL_NS, .argv = check_argv, .staged = staged_check,
		.devices = NULL, .hostname = "capsule",
		.limits = { .wall_ms = 10000, .rlim_as = 1024 * MiB, .rlim_data = 512 * MiB,
		            .rlim_cpu_s = 11, .rlim_fsize = 16 * MiB, .rlim_nofile = 64,
		            .rlim_nproc = 64, .rlim_stack = 8 * MiB, .cg_memory = 256 * MiB,
		            .cg_pids = 64, .root_size = 4 * MiB, .cache_size = 16 * MiB,
		            .stdout_cap = 8 * MiB, .stderr_cap = 8 * MiB, .output_cap = 1 * MiB,
		            .args_cap = 1 * MiB },
		.syscalls = base_syscalls, .denied_explicitly = denied_list,
		.ioctl_cmds = ioctl_cmds, .prctl_options = prctl_options, .landlock = 1,
	},
	{
		.name = "tool-run",
		.purpose = "an interpreter tool run with caller-given argv (e.g. BIN check work/x.ail); "
		           "the caller's worktree read-only at /work; adds /dev/null, /dev/zero, /dev/urandom",
		.namespaces = ALL_NS, .argv = NULL, .staged = staged_transition,
		.devices = tool_devices, .worktree_mount = "/work", .hostname = "capsule",
		.limits = { .wall_ms = 20000, .rlim_as = 1024 * MiB, .rlim_data = 512 * MiB,
		            .rlim_cpu_s = 21, .rlim_fsize = 16 * MiB, .rlim_nofile = 64,
		            .rlim_nproc = 64, .rlim_stack = 8 * MiB, .cg_memory = 256 * MiB,
		            .cg_pids = 64, .root_size = 4 * MiB, .cache_size = 16 * MiB,
		            .stdout_cap = 8 * MiB, .stderr_cap = 8 * MiB, .output_cap = 1 * MiB,
		            .args_cap = 1 * MiB },
		.syscalls = base_syscalls, .denied_explicitly = denied_list,
		.ioctl_cmds = ioctl_cmds, .prctl_options = prctl_options, .landlock = 1,
	},
	{
		.name = "exec",
		.purpose = "one project command (Workspace.Exec): host system dirs and read roots read-only, "
		           "the worktree read-write at /work, the exec cache at /cache, execve allowed, no network",
		.namespaces = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS,
		.argv = NULL, .staged = NULL, .devices = NULL, .worktree_mount = "/work", .hostname = "capsule",
		/* Per-run limits come from the request (supervisor/exec.h); these
		 * are its defaults. RLIMIT_AS unlimited (V8 and Go reserve address
		 * space they never touch): the memory group bounds what is used,
		 * RLIMIT_DATA (2x the memory limit) each process where there is none. */
		.limits = { .wall_ms = 120000, .rlim_as = RLIM_INFINITY, .rlim_data = 4096 * MiB,
		            .rlim_cpu_s = 120, .rlim_fsize = 1024 * MiB, .rlim_nofile = 4096,
		            .rlim_nproc = 256 + 32, .rlim_stack = 8 * MiB, .cg_memory = 2048 * MiB,
		            .cg_pids = 256, .root_size = 1 * MiB, .cache_size = 512 * MiB,
		            .stdout_cap = 64 * MiB, .stderr_cap = 64 * MiB, .output_cap = 64 * MiB,
		            .args_cap = 0 },
		.syscalls = exec_syscalls, .denied_explicitly = exec_denied_list,
		.ioctl_cmds = exec_ioctl_cmds, .prctl_options = exec_prctl_options, .landlock = 1,
		.exec = &exec_layout,
	},
	{ .name = NULL },
};

const struct capsule_profile *capsule_profile_find(const char *name)
{
	for (const struct capsule_profile *p = capsule_profiles; p->name; p++)
		if (strcmp(p->name, name) == 0) return p;
	return NULL;
}

/* ---- landlock ABI ------------------------------------------------------ */

int capsule_landlock_abi(void)
{
#ifdef SYS_landlock_create_ruleset
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, 1U /* VERSION */);
	return abi < 0 ? 0 : (int)abi;
#else
	return 0;
#endif
}

uint64_t capsule_landlock_fs_rights(int abi)
{
	if (abi < 1) return 0;
	uint64_t r = (CAPSULE_LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
	if (abi >= 2) r |= CAPSULE_LL_FS_REFER;
	if (abi >= 3) r |= CAPSULE_LL_FS_TRUNCATE;
	if (abi >= 5) r |= CAPSULE_LL_FS_IOCTL_DEV;
	return r;
}

/* ---- rlimits and landlock rules, as capsule.c applies them ------------- */

size_t capsule_profile_rlimits(const struct capsule_profile *p, struct capsule_rlimit out[CAPSULE_NRLIMITS])
{
	const struct capsule_limits *l = &p->limits;
	const struct capsule_rlimit t[CAPSULE_NRLIMITS] = {
		{ RLIMIT_AS, "RLIMIT_AS", l->rlim_as, l->rlim_as },
		{ RLIMIT_DATA, "RLIMIT_DATA", l->rlim_data, l->rlim_data },
		{ RLIMIT_FSIZE, "RLIMIT_FSIZE", l->rlim_fsize, l->rlim_fsize },
		{ RLIMIT_NPROC, "RLIMIT_NPROC", l->rlim_nproc, l->rlim_nproc },
		{ RLIMIT_STACK, "RLIMIT_STACK", l->rlim_stack, l->rlim_stack },
		{ RLIMIT_CORE, "RLIMIT_CORE", 0, 0 },
		{ RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", 0, 0 },
		{ RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", 0, 0 },
		{ RLIMIT_RTPRIO, "RLIMIT_RTPRIO", 0, 0 },
		{ RLIMIT_CPU, "RLIMIT_CPU", l->rlim_cpu_s, l->rlim_cpu_s + 1 },
		{ RLIMIT_NOFILE, "RLIMIT_NOFILE", l->rlim_nofile, l->rlim_nofile },
	};
	memcpy(out, t, sizeof t);
	return CAPSULE_NRLIMITS;
}

/* Left alone: none of them widens what the capsule can reach (a raised
 * nice or rtprio needs setpriority/sched_setscheduler, which the filter
 * refuses; file locks and pending signals stay inside the capsule). */
const char *const capsule_rlimits_inherited[] = { "RLIMIT_LOCKS", "RLIMIT_NICE", "RLIMIT_RTTIME",
                                                  "RLIMIT_SIGPENDING", NULL };

size_t capsule_landlock_rules(const struct capsule_profile *p, int with_worktree,
                              struct capsule_ll_rule out[CAPSULE_LL_MAX_RULES])
{
	size_t n = 0;
	if (p->exec) {
		/* The exec capsule: the system directories (those of the host that
		 * are directories: capsule/exec_capsule.c skips the others), /proc,
		 * the devices, the writable mounts. Read roots add one rule each,
		 * with the system directories' rights. */
		const struct capsule_exec_layout *x = p->exec;
		/* the root lists its mount points (ls /); nothing below gains by it */
		out[n++] = (struct capsule_ll_rule){ "/", CAPSULE_LL_FS_READ_DIR, 1 };
		for (const char *const *d = x->system; *d && n < CAPSULE_LL_MAX_RULES; d++) {
			out[n] = (struct capsule_ll_rule){ "", x->ll_system, 1 };
			snprintf(out[n++].path, sizeof out[0].path, "%s", *d);
		}
		if (n < CAPSULE_LL_MAX_RULES) out[n++] = (struct capsule_ll_rule){ "/proc", x->ll_proc, 1 };
		if (n < CAPSULE_LL_MAX_RULES) out[n++] = (struct capsule_ll_rule){ "/dev", CAPSULE_LL_FS_READ_DIR, 1 };
		for (const char *const *d = x->devices; *d && n < CAPSULE_LL_MAX_RULES; d++) {
			out[n] = (struct capsule_ll_rule){ "", x->ll_dev, 0 };
			snprintf(out[n++].path, sizeof out[0].path, "%s", *d);
		}
		static const char *const rw[] = { "/work", "/cache", "/tmp", "/dev/shm" };
		for (size_t i = 0; i < 4 && n < CAPSULE_LL_MAX_RULES; i++) {
			out[n] = (struct capsule_ll_rule){ "", x->ll_write, 1 };
			snprintf(out[n++].path, sizeof out[0].path, "%s", rw[i]);
		}
		(void)with_worktree;
		return n;
	}
	out[n++] = (struct capsule_ll_rule){ "/", CAPSULE_LL_ROOT_ACCESS, 1 };
	out[n++] = (struct capsule_ll_rule){ "/.capsule-cache", CAPSULE_LL_CACHE_ACCESS, 1 };
	for (const char *const *d = p->devices; d && *d && n < CAPSULE_LL_MAX_RULES; d++) {
		out[n] = (struct capsule_ll_rule){ "", CAPSULE_LL_DEV_ACCESS, 0 };
		snprintf(out[n++].path, sizeof out[0].path, "%s", *d);
	}
	if (with_worktree && p->worktree_mount && n < CAPSULE_LL_MAX_RULES) {
		out[n] = (struct capsule_ll_rule){ "", CAPSULE_LL_ROOT_ACCESS, 1 }; /* read only, like the root */
		snprintf(out[n++].path, sizeof out[0].path, "%s", p->worktree_mount);
	}
	for (const char *const *w = p->writable; w && *w && n < CAPSULE_LL_MAX_RULES; w++) {
		out[n] = (struct capsule_ll_rule){ "",
			CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_WRITE_FILE | CAPSULE_LL_FS_TRUNCATE, 0 };
		snprintf(out[n++].path, sizeof out[0].path, "/%s", *w);
	}
	return n;
}

uint64_t capsule_landlock_rule_rights(const struct capsule_ll_rule *r, int abi)
{
	uint64_t a = r->access & capsule_landlock_fs_rights(abi);
	/* A file (device, writable staged file) may carry only file rights. */
	if (!r->dir)
		a &= CAPSULE_LL_FS_EXECUTE | CAPSULE_LL_FS_WRITE_FILE | CAPSULE_LL_FS_READ_FILE |
		     CAPSULE_LL_FS_TRUNCATE | CAPSULE_LL_FS_IOCTL_DEV;
	return a;
}

static const char *const ll_fs_names[] = {
	"execute", "write_file", "read_file", "read_dir", "remove_dir", "remove_file", "make_char",
	"make_dir", "make_reg", "make_sock", "make_fifo", "make_block", "make_sym", "refer", "truncate",
	"ioctl_dev", NULL,
};

const char *capsule_landlock_rights_names(uint64_t rights, char *buf, size_t n)
{
	size_t l = 0;
	buf[0] = 0;
	for (size_t i = 0; ll_fs_names[i] && l < n; i++)
		if (rights & (1ULL << i)) {
			int w = snprintf(buf + l, n - l, "%s%s", l ? "," : "", ll_fs_names[i]);
			if (w < 0) break;
			l += (size_t)w;
		}
	if (!rights) snprintf(buf, n, "(none)");
	return buf;
}

/* ---- seccomp ------------------------------------------------------------ */

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name, unsigned n,
                const struct scmp_arg_cmp *cmp, struct world_err *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return werr(err, WX_FAIL, "seccomp: syscall %s unknown to libseccomp", name);
	int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (rc < 0)
		return werr(err, WX_FAIL, "seccomp: rule for %s: %s", name, strerror(-rc));
	return 0;
}

void *capsule_seccomp_build(const struct capsule_profile *p, struct world_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_NOTIFY);
	if (!ctx) {
		werr(err, WX_FAIL, "seccomp: seccomp_init failed for profile %s", p->name);
		return NULL;
	}
	/* A foreign architecture (i386 via int 0x80) or an x32 number kills the process. */
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* A binary tree over syscall numbers: a Go program makes many syscalls. */
	if (rc == 0) rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		werr(err, WX_FAIL, "seccomp: attributes: %s", strerror(-rc));
		goto fail;
	}
	for (const struct capsule_syscall *s = p->syscalls; s->name; s++) {
		struct scmp_arg_cmp cmp[2];
		switch (s->kind) {
		case SC_ALLOW:
			if (rule(ctx, SCMP_ACT_ALLOW, s->name, 0, NULL, err) < 0) goto fail;
			break;
		case SC_ERRNO:
			if (rule(ctx, SCMP_ACT_ERRNO((uint32_t)s->errno_value), s->name, 0, NULL, err) < 0)
				goto fail;
			break;
		case SC_ALLOW_IOCTL:
			/* The kernel reads the command as 32 bits: compare exactly those,
			 * so junk in the upper half neither bypasses nor confuses the rule. */
			for (const unsigned long *c = p->ioctl_cmds; *c; c++) {
				cmp[0] = (struct scmp_arg_cmp){ 1, SCMP_CMP_MASKED_EQ, 0xffffffffULL, *c };
				if (rule(ctx, SCMP_ACT_ALLOW, s->name, 1, cmp, err) < 0) goto fail;
			}
			break;
		case SC_ALLOW_CLONE:
			cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_MASKED_EQ, NS_FLAGS_CLONE, 0 };
			if (rule(ctx, SCMP_ACT_ALLOW, s->name, 1, cmp, err) < 0) goto fail;
			break;
		case SC_ALLOW_EXEC:
			cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_EQ, CAPSULE_INTERP_FD, 0 };
			cmp[1] = (struct scmp_arg_cmp){ 4, SCMP_CMP_EQ, AT_EMPTY_PATH, 0 };
			if (rule(ctx, SCMP_ACT_ALLOW, s->name, 2, cmp, err) < 0) goto fail;
			break;
		case SC_ALLOW_SETUP_SEND:
			cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_EQ, CAPSULE_SETUP_FD, 0 };
			if (rule(ctx, SCMP_ACT_ALLOW, s->name, 1, cmp, err) < 0) goto fail;
			break;
		case SC_ALLOW_SOCKET: {
			/* The domain compared as all 64 bits: junk above an allowed
			 * family matches nothing and is reported. */
			static const int fams[] = { AF_UNIX, AF_INET, AF_INET6 };
			for (size_t i = 0; i < 3; i++) {
				cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_EQ, (scmp_datum_t)fams[i], 0 };
				if (rule(ctx, SCMP_ACT_ALLOW, s->name, 1, cmp, err) < 0) goto fail;
			}
			cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_EQ, AF_NETLINK, 0 };
			if (rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), s->name, 1, cmp, err) < 0) goto fail;
			break;
		}
		case SC_ALLOW_MODE1:
		case SC_ALLOW_MODE2:
		case SC_ALLOW_MODE3: {
			/* The mode compared under a mask (the kernel reads it as
			 * umode_t; junk above is masked off): no setuid/setgid bit
			 * -> allow; either bit -> EPERM. Disjoint, so the order of
			 * libseccomp's rules does not matter. A libseccomp that does
			 * not know the call (fchmodat2 before 2.5.5) leaves it to
			 * the default. */
			unsigned a = s->kind == SC_ALLOW_MODE1 ? 1 : s->kind == SC_ALLOW_MODE2 ? 2 : 3;
			if (seccomp_syscall_resolve_name(s->name) == __NR_SCMP_ERROR) break;
			cmp[0] = (struct scmp_arg_cmp){ a, SCMP_CMP_MASKED_EQ, S_ISUID | S_ISGID, 0 };
			if (rule(ctx, SCMP_ACT_ALLOW, s->name, 1, cmp, err) < 0) goto fail;
			cmp[0] = (struct scmp_arg_cmp){ a, SCMP_CMP_MASKED_EQ, S_ISUID, S_ISUID };
			if (rule(ctx, SCMP_ACT_ERRNO(EPERM), s->name, 1, cmp, err) < 0) goto fail;
			cmp[0] = (struct scmp_arg_cmp){ a, SCMP_CMP_MASKED_EQ, S_ISUID | S_ISGID, S_ISGID };
			if (rule(ctx, SCMP_ACT_ERRNO(EPERM), s->name, 1, cmp, err) < 0) goto fail;
			break;
		}
		case SC_ALLOW_PRCTL:
			for (const int *o = p->prctl_options; *o >= 0; o++) {
				cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_EQ, (scmp_datum_t)*o, 0 };
				if (rule(ctx, SCMP_ACT_ALLOW, s->name, 1, cmp, err) < 0) goto fail;
			}
			/* PR_CAP_AMBIENT only as the read-only IS_SET query. */
			cmp[0] = (struct scmp_arg_cmp){ 0, SCMP_CMP_EQ, PR_CAP_AMBIENT, 0 };
			cmp[1] = (struct scmp_arg_cmp){ 1, SCMP_CMP_EQ, PR_CAP_AMBIENT_IS_SET, 0 };
			if (rule(ctx, SCMP_ACT_ALLOW, s->name, 2, cmp, err) < 0) goto fail;
			break;
		}
	}
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

/* Export through a memfd: libseccomp 2.5 writes filters only to an fd. */
static int export_to_buf(scmp_filter_ctx ctx, int pfc, unsigned char **buf, size_t *len,
                         struct world_err *err)
{
	int fd = memfd_create("world-seccomp-export", MFD_CLOEXEC);
	if (fd < 0) return werr(err, WX_IO, "seccomp export: memfd_create: %s", strerror(errno));
	int rc = pfc ? seccomp_export_pfc(ctx, fd) : seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		close(fd);
		return werr(err, WX_FAIL, "seccomp export: %s", strerror(-rc));
	}
	off_t end = lseek(fd, 0, SEEK_END);
	if (end < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return werr(err, WX_IO, "seccomp export: lseek: %s", strerror(errno));
	}
	unsigned char *b = malloc((size_t)end + 1);
	if (!b) {
		close(fd);
		return werr(err, WX_FAIL, "seccomp export: out of memory");
	}
	size_t got = 0;
	while (got < (size_t)end) {
		ssize_t n = read(fd, b + got, (size_t)end - got);
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) {
			free(b);
			close(fd);
			return werr(err, WX_IO, "seccomp export: read: %s", n < 0 ? strerror(errno) : "short");
		}
		got += (size_t)n;
	}
	close(fd);
	b[got] = 0;
	*buf = b;
	*len = got;
	return 0;
}

/* The head libseccomp gives a one-architecture filter (x86_64):
 *   0 ld [4] (arch)     1 jeq ARCH, 0, BAD     2 ld [0] (nr)
 *   3 jge 0x40000000, 0, +1     4 jeq 0xffffffff, 0, BAD
 * where BAD is a `ret ACTION`. Read back, not assumed: a libseccomp that
 * built another head would make `profile show` fail rather than print a
 * guard the program lacks. */
int capsule_seccomp_guards(const unsigned char *bpf, size_t len, struct capsule_arch_guards *g,
                           struct world_err *err)
{
	struct ins { uint16_t code; uint8_t jt, jf; uint32_t k; };
	size_t n = len / 8;
	struct ins f[6];
	if (len % 8 || n < 6) return werr(err, WX_FAIL, "seccomp program: %zu bytes, not a filter with arch guards", len);
	for (size_t i = 0; i < 6; i++) memcpy(&f[i], bpf + 8 * i, 8);
	/* the target of a conditional's false branch, if it is a ret */
#define RET_AT(i, off, out) do { size_t t_ = (i) + 1 + (off); struct ins r_; \
	if (t_ >= n) return werr(err, WX_FAIL, "seccomp program: instruction %zu jumps past the end", (size_t)(i)); \
	memcpy(&r_, bpf + 8 * t_, 8); \
	if (r_.code != 0x06) return werr(err, WX_FAIL, "seccomp program: instruction %zu: no ret at its target", (size_t)(i)); \
	(out) = r_.k; } while (0)
	if (f[0].code != 0x20 || f[0].k != 4) return werr(err, WX_FAIL, "seccomp program: instruction 0 does not load the arch");
	if (f[1].code != 0x15 || f[1].jt != 0) return werr(err, WX_FAIL, "seccomp program: instruction 1 does not compare the arch");
	g->arch = f[1].k;
	RET_AT(1, f[1].jf, g->bad_arch_action);
	if (f[2].code != 0x20 || f[2].k != 0) return werr(err, WX_FAIL, "seccomp program: instruction 2 does not load the syscall number");
	/* Two shapes, by the size of the rest: "jge X32, 0, +1; jeq -1, 0, BAD"
	 * (BAD a ret further on), or with the ret right after the guard:
	 * "jge X32, 0, +2; jeq -1, +1, 0; ret BAD" (both skips land on 6). */
	if (f[3].code != 0x35 || f[3].jt != 0 || (f[3].jf != 1 && f[3].jf != 2))
		return werr(err, WX_FAIL, "seccomp program: instruction 3 is not the x32 guard (jge)");
	g->x32_bit = f[3].k;
	if (f[4].code != 0x15 || f[4].k != 0xffffffffu)
		return werr(err, WX_FAIL, "seccomp program: instruction 4 is not the x32 guard's -1 exception");
	if (f[3].jf == 1) {
		if (f[4].jt != 0) return werr(err, WX_FAIL, "seccomp program: instruction 4 is not the x32 guard's -1 exception");
		RET_AT(4, f[4].jf, g->x32_action);
	} else {
		if (f[4].jt != 1 || f[4].jf != 0 || f[5].code != 0x06)
			return werr(err, WX_FAIL, "seccomp program: instructions 4-5 are not the x32 guard's -1 exception and ret");
		g->x32_action = f[5].k;
	}
#undef RET_AT
	return 0;
}

static const char *ret_action_name(uint32_t a)
{
	switch (a) {
	case 0x80000000u: return "KILL_PROCESS";
	case 0x00000000u: return "KILL_THREAD";
	case 0x7fc00000u: return "NOTIFY";
	case 0x7fff0000u: return "ALLOW";
	case 0x00030000u: return "TRAP";
	}
	return (a & 0xffff0000u) == 0x00050000u ? "ERRNO" : "?";
}

/* libseccomp's PFC with the x32 guard written in after the arch test: the
 * BPF has it, libseccomp 2.5's PFC export does not show it. */
static int pfc_with_guards(unsigned char *pfc, size_t plen, const unsigned char *bpf, size_t blen,
                           unsigned char **out, size_t *olen, struct world_err *err)
{
	struct capsule_arch_guards g;
	if (capsule_seccomp_guards(bpf, blen, &g, err) < 0) return -1;
	char add[400];
	int al = snprintf(add, sizeof add,
	                  "  # x32 guard (in the BPF; libseccomp's PFC export leaves it out): a number with\n"
	                  "  # __X32_SYSCALL_BIT set, other than -1, takes the invalid architecture action\n"
	                  "  if ($syscall >= %u && $syscall != 4294967295)\n"
	                  "    action %s;\n", g.x32_bit, ret_action_name(g.x32_action));
	char arch_line[64];
	snprintf(arch_line, sizeof arch_line, "if ($arch == %u)\n", g.arch);
	char *at = strstr((char *)pfc, arch_line);
	if (!at) return werr(err, WX_FAIL, "seccomp PFC export: no line \"if ($arch == %u)\"", g.arch);
	size_t pre = (size_t)(at - (char *)pfc) + strlen(arch_line);
	unsigned char *b = malloc(plen + (size_t)al + 1);
	if (!b) return werr(err, WX_FAIL, "seccomp export: out of memory");
	memcpy(b, pfc, pre);
	memcpy(b + pre, add, (size_t)al);
	memcpy(b + pre + al, pfc + pre, plen - pre);
	b[plen + (size_t)al] = 0;
	*out = b;
	*olen = plen + (size_t)al;
	return 0;
}

static int export_profile(const struct capsule_profile *p, int pfc, unsigned char **buf, size_t *len,
                          struct world_err *err)
{
	scmp_filter_ctx ctx = capsule_seccomp_build(p, err);
	if (!ctx) return -1;
	int rc = export_to_buf(ctx, 0, buf, len, err);
	if (rc == 0 && pfc) {
		unsigned char *bpf = *buf, *text = NULL, *full = NULL;
		size_t blen = *len, tlen = 0;
		rc = export_to_buf(ctx, 1, &text, &tlen, err);
		if (rc == 0) rc = pfc_with_guards(text, tlen, bpf, blen, &full, len, err);
		free(text);
		free(bpf);
		*buf = rc == 0 ? full : NULL;
	}
	seccomp_release(ctx);
	return rc;
}

int capsule_seccomp_bpf(const struct capsule_profile *p, unsigned char **buf, size_t *len,
                        struct world_err *err)
{
	return export_profile(p, 0, buf, len, err);
}

int capsule_seccomp_pfc(const struct capsule_profile *p, unsigned char **buf, size_t *len,
                        struct world_err *err)
{
	return export_profile(p, 1, buf, len, err);
}

#ifndef CAPSULE_SECCOMP_GENERATOR
const struct capsule_seccomp_program *capsule_seccomp_embedded(const struct capsule_profile *p)
{
	for (size_t i = 0; capsule_profiles[i].name; i++) {
		if (p != &capsule_profiles[i]) continue;
		for (const struct capsule_seccomp_program *e = capsule_seccomp_programs; e->profile; e++)
			if (strcmp(e->profile, p->name) == 0) return e;
	}
	return NULL;
}
#endif

/* ---- renderers ---------------------------------------------------------- */

static const struct { unsigned long flag; const char *name; } ns_names[] = {
	{ CLONE_NEWUSER, "user" }, { CLONE_NEWNS, "mount" }, { CLONE_NEWPID, "pid" },
	{ CLONE_NEWNET, "net" }, { CLONE_NEWIPC, "ipc" }, { CLONE_NEWUTS, "uts" },
	{ CLONE_NEWCGROUP, "cgroup" }, { 0, NULL },
};

static const char *kind_rule(enum capsule_sc_kind k)
{
	switch (k) {
	case SC_ALLOW: return "allow";
	case SC_ALLOW_IOCTL: return "allow if (arg1 & 0xffffffff) is a listed command";
	case SC_ALLOW_CLONE: return "allow if (arg0 & CLONE_NEW{NS,CGROUP,UTS,IPC,USER,PID,NET}) == 0";
	case SC_ALLOW_EXEC: return "allow if arg0 == 10 (pinned fd) and arg4 == AT_EMPTY_PATH";
	case SC_ALLOW_PRCTL: return "allow if arg0 is a listed option";
	case SC_ALLOW_SETUP_SEND: return "allow if arg0 == 12 (setup channel, closed at exec)";
	case SC_ALLOW_SOCKET: return "allow if arg0 is AF_UNIX, AF_INET or AF_INET6; AF_NETLINK: errno EAFNOSUPPORT";
	case SC_ALLOW_MODE1: return "allow if (arg1 & 06000) == 0; S_ISUID or S_ISGID in arg1: errno EPERM";
	case SC_ALLOW_MODE2: return "allow if (arg2 & 06000) == 0; S_ISUID or S_ISGID in arg2: errno EPERM";
	case SC_ALLOW_MODE3: return "allow if (arg3 & 06000) == 0; S_ISUID or S_ISGID in arg3: errno EPERM";
	case SC_ERRNO: return "errno";
	}
	return "?";
}

static const char *prctl_name(int o)
{
	switch (o) {
	case PR_GET_SECCOMP: return "PR_GET_SECCOMP";
	case PR_GET_NO_NEW_PRIVS: return "PR_GET_NO_NEW_PRIVS";
	case PR_CAPBSET_READ: return "PR_CAPBSET_READ";
	case PR_GET_SECUREBITS: return "PR_GET_SECUREBITS";
	case PR_GET_DUMPABLE: return "PR_GET_DUMPABLE";
	case PR_GET_KEEPCAPS: return "PR_GET_KEEPCAPS";
	case PR_SET_NAME: return "PR_SET_NAME";
	case PR_GET_NAME: return "PR_GET_NAME";
	case PR_SET_PDEATHSIG: return "PR_SET_PDEATHSIG";
	case PR_GET_PDEATHSIG: return "PR_GET_PDEATHSIG";
	case PR_SET_CHILD_SUBREAPER: return "PR_SET_CHILD_SUBREAPER";
	case PR_GET_CHILD_SUBREAPER: return "PR_GET_CHILD_SUBREAPER";
	case PR_SET_NO_NEW_PRIVS: return "PR_SET_NO_NEW_PRIVS";
	case PR_SET_TIMERSLACK: return "PR_SET_TIMERSLACK";
	case PR_GET_TIMERSLACK: return "PR_GET_TIMERSLACK";
	case PR_SET_VMA: return "PR_SET_VMA";
	}
	return "?";
}

static const char *arch_name(uint32_t a)
{
	return a == 0xc000003eu ? "x86_64" : "?";
}

/* The landlock rules of p as JSON; with host, the rights each really gets
 * under this kernel's ABI. */
static json_t *landlock_json(const struct capsule_profile *p, int abi)
{
	struct capsule_ll_rule r[CAPSULE_LL_MAX_RULES];
	size_t n = capsule_landlock_rules(p, 1, r);
	json_t *rules = json_array();
	char names[300];
	for (size_t i = 0; i < n; i++) {
		/* the profile's rule: the rights asked for (a file only file rights) */
		uint64_t asked = capsule_landlock_rule_rights(&r[i], 99);
		json_t *o = json_pack("{s:s,s:s,s:s}", "path", r[i].path, "kind", r[i].dir ? "dir" : "file",
		                      "access", capsule_landlock_rights_names(asked, names, sizeof names));
		if (p->worktree_mount && strcmp(r[i].path, p->worktree_mount) == 0)
			json_object_set_new(o, "when", json_string("a worktree is given"));
		if (abi >= 0)
			json_object_set_new(o, "granted_here", json_string(capsule_landlock_rights_names(
				capsule_landlock_rule_rights(&r[i], abi), names, sizeof names)));
		json_array_append_new(rules, o);
	}
	return rules;
}

/* The exec capsule's mounts, in the order capsule/exec_capsule.c makes them. */
static json_t *exec_mounts_json(const struct capsule_profile *p)
{
	const struct capsule_exec_layout *x = p->exec;
	json_t *m = json_array();
	json_array_append_new(m, json_pack("{s:s,s:s,s:I,s:s}", "path", "/", "type", "tmpfs", "size",
		(json_int_t)p->limits.root_size, "options", "ro,nosuid,nodev,noexec (mount points and symlinks only)"));
	for (const char *const *d = x->system; *d; d++)
		json_array_append_new(m, json_pack("{s:s,s:s,s:s}", "path", *d, "type", "bind",
			"options", "ro,nosuid,nodev, not recursive; a host symlink (merged /usr) is copied as the same symlink; absent: skipped"));
	json_t *dev = json_array();
	for (const char *const *d = x->devices; *d; d++) json_array_append_new(dev, json_string(*d));
	json_array_append_new(m, json_pack("{s:s,s:s,s:s,s:o}", "path", "/dev", "type", "tmpfs",
		"options", "ro,nosuid,noexec; the host nodes bound nosuid,noexec; symlinks fd, stdin, stdout, stderr; "
		"/dev/shm a private tmpfs (64 MiB, rw,nosuid,nodev,noexec, mode 1777)", "devices", dev));
	json_t *masked = json_array();
	for (const char *const *e = x->etc_masked; *e; e++) json_array_append_new(masked, json_string(*e));
	json_array_append_new(m, json_pack("{s:s,s:s,s:o}", "path", "/etc/...", "type", "mask",
		"hidden", masked));
	json_array_append_new(m, json_pack("{s:s,s:s,s:I,s:s}", "path", "/tmp", "type", "tmpfs", "size",
		(json_int_t)x->tmp_size, "options", "rw,nosuid,nodev, mode 1777, private and empty (charged to the memory group)"));
	json_array_append_new(m, json_pack("{s:s,s:s,s:s}", "path", "READ_ROOT", "type", "bind",
		"options", "each of the request's read roots at its canonical host path (after /tmp: one below /tmp appears in the private /tmp): ro,nosuid,nodev, not recursive"));
	json_array_append_new(m, json_pack("{s:s,s:s,s:s}", "path", "/proc", "type", "proc",
		"options", "nosuid,nodev,noexec; the capsule's own pid namespace"));
	json_array_append_new(m, json_pack("{s:s,s:s,s:s}", "path", "/work", "type", "bind",
		"options", "the request's worktree, rw,nosuid,nodev, not recursive; as root idmapped (its owner reads and writes as "
		"the capsule user)"));
	json_array_append_new(m, json_pack("{s:s,s:s,s:s}", "path", "/work/PROTECTED", "type", "bind",
		"options", "each protected name that exists (directory or file, not a symlink) bound over itself ro,nosuid,nodev"));
	json_array_append_new(m, json_pack("{s:s,s:s,s:s}", "path", "/cache", "type", "bind",
		"options", "the request's exec cache, rw,nosuid,nodev, not recursive; as root idmapped"));
	return m;
}

json_t *capsule_profile_json(const struct capsule_profile *p, const struct capsule_host_facts *host)
{
	const struct capsule_limits *l = &p->limits;
	json_t *o = json_object();
	if (!o) return NULL;
	json_object_set_new(o, "profile", json_string(p->name));
	json_object_set_new(o, "purpose", json_string(p->purpose));
	json_t *ns = json_array();
	for (size_t i = 0; ns_names[i].name; i++)
		if (p->namespaces & ns_names[i].flag) json_array_append_new(ns, json_string(ns_names[i].name));
	json_object_set_new(o, "namespaces", ns);
	json_object_set_new(o, "net_namespace", json_string("a new empty one per capsule; a root supervisor may opt in "
		"to one empty namespace (loopback down, owned by the initial user namespace) shared by its capsules"));

	json_t *ids = json_object();
	json_object_set_new(ids, "inside_uid", json_integer(CAPSULE_INSIDE_ID));
	json_object_set_new(ids, "inside_gid", json_integer(CAPSULE_INSIDE_ID));
	json_object_set_new(ids, "as_root_host_id", json_pack("{s:I,s:I,s:s}", "base",
		(json_int_t)CAPSULE_HOST_ID_BASE, "span", (json_int_t)CAPSULE_HOST_ID_SPAN,
		"rule", "base + host pid of the capsule init"));
	json_object_set_new(ids, "unprivileged_host_id", json_string("the caller's own uid/gid"));
	json_object_set_new(ids, "supplementary_groups",
		json_string("none as root; an unprivileged caller keeps its own (setgroups is denied in its user namespace): "
		            "each shows as 65534 (unmapped) but its own gid, mapped in, which shows as the inside gid"));
	json_object_set_new(o, "identity", ids);

	json_t *mounts = json_array();
	json_array_append_new(mounts, json_pack("{s:s,s:s,s:I,s:I,s:s}", "path", "/", "type", "tmpfs",
		"size", (json_int_t)l->root_size, "nr_inodes", (json_int_t)256,
		"options", "ro,nosuid,nodev,noexec (read-only after staging)"));
	json_array_append_new(mounts, json_pack("{s:s,s:s,s:I,s:I,s:s}", "path", "/.capsule-cache",
		"type", "tmpfs", "size", (json_int_t)l->cache_size, "nr_inodes", (json_int_t)4096,
		"options", "rw,nosuid,nodev,noexec"));
	for (const char *const *w = p->writable; w && *w; w++) {
		char path[256];
		snprintf(path, sizeof path, "/%s", *w);
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s}", "path", path, "type", "bind",
			"options", "rw,nosuid,nodev,noexec: the staged file onto itself (rewritable in place; "
			"no rename, unlink or new file; bytes count against the root size)"));
	}
	for (const char *const *d = p->devices; d && *d; d++)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s}", "path", *d, "type", "bind",
			"options", "nosuid,noexec: the host device node"));
	if (p->worktree_mount)
		json_array_append_new(mounts, json_pack("{s:s,s:s,s:s,s:s}", "path", p->worktree_mount, "type", "bind",
			"source", "the caller's worktree (optional): opened O_PATH|O_DIRECTORY|O_NOFOLLOW by the trusted "
			"parent; as root cloned from that fd (open_tree, mount_setattr) and attached by the child (move_mount); "
			"unprivileged re-resolved in the capsule without symlinks and required to be the same inode",
			"options", "ro,nosuid,nodev,noexec, not recursive (mounts below it are not visible)"));
	if (p->exec) {
		json_decref(mounts);
		mounts = exec_mounts_json(p);
	}
	json_object_set_new(o, "mounts", mounts);
	json_t *staged = json_array();
	for (const char *const *s = p->staged; s && *s; s++) json_array_append_new(staged, json_string(*s));
	json_object_set_new(o, "staged", staged);
	json_object_set_new(o, "old_root", json_string(p->exec ? "detached (pivot_root + MNT_DETACH); only the mounts listed"
		: "detached (pivot_root + MNT_DETACH); no /proc, no /sys, no host path"));
	json_object_set_new(o, "hostname", json_string(p->hostname));

	struct capsule_rlimit rl[CAPSULE_NRLIMITS];
	size_t nrl = capsule_profile_rlimits(p, rl);
	json_t *rlj = json_object();
	for (size_t i = 0; i < nrl; i++)
		json_object_set_new(rlj, rl[i].name, json_pack("{s:I,s:I}", "soft", (json_int_t)rl[i].soft,
			"hard", (json_int_t)rl[i].hard));
	json_object_set_new(o, "rlimits", rlj);
	json_t *inh = json_array();
	for (const char *const *r = capsule_rlimits_inherited; *r; r++) json_array_append_new(inh, json_string(*r));
	json_object_set_new(o, "rlimits_inherited", inh);
	json_object_set_new(o, "cgroups", json_pack("{s:I,s:I,s:s}", "memory_bytes",
		(json_int_t)l->cg_memory, "pids", (json_int_t)l->cg_pids, "placement",
		"v2 where the controller is delegated, else v1; a group below the caller's own; else none (rlimits remain)"));
	json_object_set_new(o, "limits", json_pack("{s:I,s:I,s:I,s:I,s:I}", "wall_ms",
		(json_int_t)l->wall_ms, "stdout_cap", (json_int_t)l->stdout_cap, "stderr_cap",
		(json_int_t)l->stderr_cap, "output_cap", (json_int_t)l->output_cap, "args_cap",
		(json_int_t)l->args_cap));

	json_object_set_new(o, "capabilities", json_string("none: bounding, ambient, inheritable, effective, permitted cleared; securebits NOROOT|NO_SETUID_FIXUP|NO_CAP_AMBIENT_RAISE locked"));
	json_object_set_new(o, "no_new_privs", json_true());
	json_object_set_new(o, "fds", json_string(p->exec ? "0 /dev/null, 1 and 2 the supervisor's pipes; all others closed "
		"(a #! script: its own fd 10, which the interpreter opens as /dev/fd/10)"
		: "0,1,2 and the kept protocol fds (3..8); all others closed"));

	json_t *env = json_array();
	for (const char *const *e = capsule_env; *e && !p->exec; e++) json_array_append_new(env, json_string(*e));
	json_object_set_new(o, "environment", p->exec ? (json_decref(env), json_string("exactly the caller's (the broker builds it)"))
		: env);
	if (p->exec) {
		json_object_set_new(o, "net_namespace", json_string("a new one per run (never the shared one): loopback brought up "
			"inside, no other interface"));
		json_object_set_new(o, "process", json_string("the capsule's init (pid 1) forks the command (execveat of the "
			"caller's fd, AT_EMPTY_PATH), reaps every orphan, and exits when the command does: the kernel then kills "
			"everything left in the pid namespace"));
	}
	json_t *argv = json_array();
	for (const char *const *a = p->argv; a && *a; a++) json_array_append_new(argv, json_string(*a));
	json_object_set_new(o, "argv", p->argv ? argv : (json_decref(argv), json_null()));

	json_t *ll = json_object();
	json_object_set_new(ll, "applied", json_boolean(p->landlock));
	json_object_set_new(ll, "handled", json_string(p->exec ? "every fs right of the running ABI; tcp not handled (the network "
		"namespace is empty); scope abstract-unix+signal (ABI>=6)"
		: "every fs right of the running ABI; tcp bind+connect (ABI>=4); scope abstract-unix+signal (ABI>=6)"));
	json_object_set_new(ll, "rules", landlock_json(p, -1));
	if (p->exec) json_object_set_new(ll, "per_run", json_string("each read root: the system directories' rights"));
	json_object_set_new(ll, "never", json_string(p->exec ? "make_char, make_block; anything outside the rules"
		: "execute, make_char/block/fifo/sock/sym, refer, any tcp port"));
	json_object_set_new(o, "landlock", ll);

	json_t *sc = json_object();
	json_object_set_new(sc, "default", json_string("user-notif: the supervisor kills the capsule (the call never returns) and reports the syscall; numbers unknown to libseccomp get ENOSYS"));
	json_object_set_new(sc, "default_action", json_string("NOTIFY (0x7fc00000)"));
	json_object_set_new(sc, "bad_arch", json_string("kill-process (x32 numbers, i386)"));
	json_object_set_new(sc, "arch", json_string("x86_64 only"));
	/* The guards as the program has them, read back from its BPF. */
	const unsigned char *bpf = NULL;
	size_t blen = 0;
	unsigned char *built = NULL;
	struct world_err gerr = { 0, "" };
#ifndef CAPSULE_SECCOMP_GENERATOR
	const struct capsule_seccomp_program *e = capsule_seccomp_embedded(p);
	if (e) {
		bpf = e->bpf;
		blen = e->bpf_len;
	}
#endif
	if (!bpf && capsule_seccomp_bpf(p, &built, &blen, &gerr) == 0) bpf = built;
	struct capsule_arch_guards g;
	if (bpf && capsule_seccomp_guards(bpf, blen, &g, &gerr) == 0) {
		char act[40], x32[120];
		snprintf(act, sizeof act, "%s (0x%08x)", ret_action_name(g.bad_arch_action), g.bad_arch_action);
		snprintf(x32, sizeof x32, "nr >= 0x%08x and nr != -1 -> %s", g.x32_bit, ret_action_name(g.x32_action));
		json_object_set_new(sc, "arch_guards", json_pack("{s:s,s:I,s:s,s:s,s:I}", "arch", arch_name(g.arch),
			"audit_arch", (json_int_t)g.arch, "other_arch_action", act, "x32_guard", x32,
			"bpf_instructions", (json_int_t)(blen / 8)));
	} else {
		json_object_set_new(sc, "arch_guards", json_pack("{s:s}", "error", gerr.msg));
	}
	free(built);
	json_t *rules = json_array();
	for (const struct capsule_syscall *s = p->syscalls; s->name; s++) {
		json_t *r = json_pack("{s:s,s:s,s:s}", "syscall", s->name, "rule", kind_rule(s->kind), "why", s->why);
		if (s->kind == SC_ERRNO) json_object_set_new(r, "errno", json_string(strerror(s->errno_value)));
		if (s->kind == SC_ALLOW_IOCTL) {
			json_t *c = json_array();
			for (const unsigned long *x = p->ioctl_cmds; *x; x++) json_array_append_new(c, json_string(capsule_ioctl_name(*x)));
			json_object_set_new(r, "commands", c);
		}
		if (s->kind == SC_ALLOW_PRCTL) {
			json_t *c = json_array();
			for (const int *x = p->prctl_options; *x >= 0; x++) json_array_append_new(c, json_string(prctl_name(*x)));
			json_array_append_new(c, json_string("PR_CAP_AMBIENT(IS_SET)"));
			json_object_set_new(r, "options", c);
		}
		json_array_append_new(rules, r);
	}
	json_object_set_new(sc, "rules", rules);
	json_t *den = json_array();
	for (const char *const *d = p->denied_explicitly; d && *d; d++) json_array_append_new(den, json_string(*d));
	json_object_set_new(sc, "denied_notably", den);
	json_object_set_new(o, "seccomp", sc);

	if (host) {
		json_t *h = json_object();
		json_object_set_new(h, "landlock_abi", json_integer(host->landlock_abi));
		json_object_set_new(h, "landlock", json_string(!p->landlock ? "not applied by this profile"
			: host->landlock_abi > 0 ? "applied" : "this kernel has no landlock: not applied"));
		if (p->landlock && host->landlock_abi > 0)
			json_object_set_new(h, "landlock_rules", landlock_json(p, host->landlock_abi));
		json_object_set_new(h, "cgroup_memory", json_pack("{s:b,s:s}", "applied", host->cgroup_ok[0],
			"where", host->cgroup[0]));
		json_object_set_new(h, "cgroup_pids", json_pack("{s:b,s:s}", "applied", host->cgroup_ok[1],
			"where", host->cgroup[1]));
		json_object_set_new(o, "this_host", h);
	}
	return o;
}

static void render_text(const struct capsule_profile *p, const struct capsule_host_facts *host, FILE *out)
{
	json_t *o = capsule_profile_json(p, host);
	const struct capsule_limits *l = &p->limits;
	fprintf(out, "profile %s\n  purpose: %s\n", p->name, p->purpose);
	fprintf(out, "\n[namespaces]\n ");
	for (size_t i = 0; ns_names[i].name; i++)
		if (p->namespaces & ns_names[i].flag) fprintf(out, " %s", ns_names[i].name);
	if (p->exec)
		fprintf(out, "\n  pidfd for the child; killing init kills the whole pid namespace\n  net: %s\n  init: %s\n",
		        json_string_value(json_object_get(o, "net_namespace")), json_string_value(json_object_get(o, "process")));
	else
		fprintf(out, "\n  pidfd for the child; killing init kills the whole pid namespace\n"
		        "  net: a new empty one per capsule; a root supervisor may opt in to one empty namespace\n"
		        "       (loopback down, owned by the initial user namespace) shared by its capsules\n");
	fprintf(out, "\n[identity]\n  inside uid/gid %d/%d; as root mapped to host id 0x%x + host pid of init "
	        "(range 0x%x..0x%x); unprivileged: the caller's own uid/gid\n",
	        CAPSULE_INSIDE_ID, CAPSULE_INSIDE_ID, CAPSULE_HOST_ID_BASE, CAPSULE_HOST_ID_BASE,
	        CAPSULE_HOST_ID_BASE + CAPSULE_HOST_ID_SPAN - 1);
	if (p->exec) {
		fprintf(out, "\n[mounts] (exec: in this order)\n");
		json_t *m, *mounts = json_object_get(o, "mounts");
		size_t i;
		json_array_foreach(mounts, i, m) {
			fprintf(out, "  %-16s %s", json_string_value(json_object_get(m, "path")),
			        json_string_value(json_object_get(m, "type")));
			if (json_object_get(m, "size"))
				fprintf(out, " size=%llu", (unsigned long long)json_integer_value(json_object_get(m, "size")));
			if (json_object_get(m, "options")) fprintf(out, " %s", json_string_value(json_object_get(m, "options")));
			json_t *lst = json_object_get(m, "hidden") ? json_object_get(m, "hidden") : json_object_get(m, "devices");
			json_t *e;
			size_t j;
			json_array_foreach(lst, j, e) fprintf(out, "%s%s", j ? " " : ": ", json_string_value(e));
			fprintf(out, "\n");
		}
		fprintf(out, "  nothing else of the host: the old root is detached\n");
		goto after_mounts;
	}
	fprintf(out, "\n[mounts]\n  /                tmpfs size=%llu nr_inodes=256 ro,nosuid,nodev,noexec (read-only after staging)\n",
	        (unsigned long long)l->root_size);
	fprintf(out, "  /.capsule-cache  tmpfs size=%llu nr_inodes=4096 rw,nosuid,nodev,noexec\n",
	        (unsigned long long)l->cache_size);
	for (const char *const *w = p->writable; w && *w; w++)
		fprintf(out, "  /%-15s bind of the staged file onto itself, rw,nosuid,nodev,noexec "
		        "(rewritable in place only)\n", *w);
	for (const char *const *d = p->devices; d && *d; d++)
		fprintf(out, "  %-16s bind of the host device node, nosuid,noexec\n", *d);
	if (p->worktree_mount)
		fprintf(out, "  %-16s bind of the caller's worktree (optional), ro,nosuid,nodev,noexec, not recursive;\n"
		        "                   opened O_PATH|O_DIRECTORY|O_NOFOLLOW by the trusted parent; as root cloned from\n"
		        "                   that fd (open_tree) and attached by the child, unprivileged re-resolved in the\n"
		        "                   capsule without symlinks and required to be the same inode\n", p->worktree_mount);
	fprintf(out, "  staged:");
	for (const char *const *s = p->staged; s && *s; s++) fprintf(out, " %s", *s);
	if (p->devices || p->worktree_mount)
		fprintf(out, "\n  no other host mount: the old root is detached (a profile with device nodes or a\n"
		        "  worktree is never cloned from the template mount namespace)\n");
	else
		fprintf(out, "\n  no host mount: the old root is detached, or never copied (cloned from the template\n"
		        "  mount namespace, root capsule makers that keep one: docs/security.md)\n");
	fprintf(out, "  no /proc, no /sys%s, no host path\n", p->devices ? "" : ", no /dev");
after_mounts:
	fprintf(out, "\n[rlimits] soft / hard, as set (in this order)\n");
	struct capsule_rlimit rl[CAPSULE_NRLIMITS];
	size_t nrl = capsule_profile_rlimits(p, rl);
	for (size_t i = 0; i < nrl; i++)
		fprintf(out, "  %-16s %llu / %llu%s\n", rl[i].name, (unsigned long long)rl[i].soft,
		        (unsigned long long)rl[i].hard,
		        rl[i].resource == RLIMIT_CPU ? "  (SIGXCPU at the soft limit, SIGKILL at the hard)"
		        : rl[i].resource == RLIMIT_NOFILE ? "  (set last, after the seccomp listener's handover)"
		        : p->exec && rl[i].resource == RLIMIT_DATA ? "  (per run: 2x the memory limit)"
		        : p->exec && rl[i].resource == RLIMIT_NPROC ? "  (per run: the pids limit + 32)"
		        : p->exec && rl[i].resource == RLIMIT_CPU ? "  (per run: the CPU time, per process)"
		        : p->exec ? ""
		        : rl[i].resource == RLIMIT_AS || rl[i].resource == RLIMIT_DATA
		        ? "  (set again on the interpreter by the capsule's agent)" : "");
	fprintf(out, "  inherited from the caller (not set):");
	for (const char *const *r = capsule_rlimits_inherited; *r; r++) fprintf(out, " %s", *r);
	fprintf(out, "\n\n[cgroups]\n  memory.max %llu bytes, pids.max %llu (v2 if delegated, else v1, below the caller's own group; "
	        "else none and rlimits remain)\n", (unsigned long long)l->cg_memory, (unsigned long long)l->cg_pids);
	if (host)
		for (int c = 0; c < 2; c++)
			fprintf(out, "  here, %s: %s\n", c ? "pids" : "memory", host->cgroup[c]);
	fprintf(out, "\n[limits]\n  wall %llu ms; stdout cap %llu; stderr cap %llu; output %llu; args %llu\n",
	        (unsigned long long)l->wall_ms, (unsigned long long)l->stdout_cap,
	        (unsigned long long)l->stderr_cap, (unsigned long long)l->output_cap, (unsigned long long)l->args_cap);
	fprintf(out, "\n[privileges]\n  %s\n  no_new_privs: yes\n  fds: %s\n",
	        json_string_value(json_object_get(o, "capabilities")), json_string_value(json_object_get(o, "fds")));
	fprintf(out, "\n[environment] (exactly)\n");
	if (p->exec) fprintf(out, "  the caller's (the broker builds it); argv: the caller's, argv[0] executed by fd");
	for (const char *const *e = capsule_env; *e && !p->exec; e++) fprintf(out, "  %s\n", *e);
	if (!p->exec) fprintf(out, "  argv: ailang");
	if (!p->argv && !p->exec) fprintf(out, " (caller-given)");
	for (const char *const *a = p->argv; a && *a; a++) fprintf(out, **a ? " %s" : " \"%s\"", *a);
	fprintf(out, "\n\n[landlock] %s\n  handled: %s\n", p->landlock ? "applied where the kernel has it" : "not applied",
	        json_string_value(json_object_get(json_object_get(o, "landlock"), "handled")));
	if (host)
		fprintf(out, "  this kernel: ABI %d%s\n", host->landlock_abi,
		        host->landlock_abi > 0 ? " (rules below: asked -> granted here)" : " (no landlock: not applied)");
	struct capsule_ll_rule r[CAPSULE_LL_MAX_RULES];
	size_t nr = capsule_landlock_rules(p, 1, r);
	char asked[300], here[300];
	for (size_t i = 0; i < nr; i++) {
		int wt = p->worktree_mount && strcmp(r[i].path, p->worktree_mount) == 0;
		capsule_landlock_rights_names(capsule_landlock_rule_rights(&r[i], 99), asked, sizeof asked);
		fprintf(out, "  %-16s %s", r[i].path, asked);
		if (host && host->landlock_abi > 0) {
			capsule_landlock_rights_names(capsule_landlock_rule_rights(&r[i], host->landlock_abi), here, sizeof here);
			if (strcmp(here, asked)) fprintf(out, " -> %s", here);
		}
		fprintf(out, "%s\n", wt ? " (when a worktree is given)" : "");
	}
	if (p->exec) fprintf(out, "  each read root: the system directories' rights\n");
	fprintf(out, "  never: %s\n", p->exec ? "make_char, make_block; anything outside the rules"
	        : "execute, make_char/block/fifo/sock/sym, refer, tcp");
	json_t *g = json_object_get(json_object_get(o, "seccomp"), "arch_guards");
	fprintf(out, "\n[seccomp] default action NOTIFY (0x7fc00000)\n"
	        "  default: user-notif -> supervisor kills the capsule (call never returns), reports \"syscall denied: NAME\";\n"
	        "           numbers unknown to libseccomp -> ENOSYS (newer runtimes fall back)\n");
	if (json_object_get(g, "error"))
		fprintf(out, "  arch guards: UNREADABLE: %s\n", json_string_value(json_object_get(g, "error")));
	else
		fprintf(out, "  arch guard: arch == %s (0x%08llx), any other -> %s\n"
		        "  x32 guard:  %s (i386 int 0x80 has another arch: the arch guard)\n",
		        json_string_value(json_object_get(g, "arch")),
		        (unsigned long long)json_integer_value(json_object_get(g, "audit_arch")),
		        json_string_value(json_object_get(g, "other_arch_action")),
		        json_string_value(json_object_get(g, "x32_guard")));
	for (const struct capsule_syscall *s = p->syscalls; s->name; s++) {
		fprintf(out, "  %-18s %s", s->name, kind_rule(s->kind));
		if (s->kind == SC_ERRNO) fprintf(out, " %s", strerror(s->errno_value));
		if (s->kind == SC_ALLOW_IOCTL)
			for (const unsigned long *x = p->ioctl_cmds; *x; x++) fprintf(out, " %s", capsule_ioctl_name(*x));
		if (s->kind == SC_ALLOW_PRCTL) {
			for (const int *x = p->prctl_options; *x >= 0; x++) fprintf(out, " %s", prctl_name(*x));
			fprintf(out, " PR_CAP_AMBIENT(IS_SET)");
		}
		fprintf(out, "  -- %s\n", s->why);
	}
	fprintf(out, "  denied notably (not listed):");
	for (const char *const *d = p->denied_explicitly; d && *d; d++) fprintf(out, " %s", *d);
	fprintf(out, "\n");
	json_decref(o);
}

int capsule_profile_render(const struct capsule_profile *p, const char *format,
                           const struct capsule_host_facts *host, FILE *out, struct world_err *err)
{
	if (strcmp(format, "text") == 0) {
		render_text(p, host, out);
	} else if (strcmp(format, "json") == 0) {
		json_t *o = capsule_profile_json(p, host);
		int rc = o ? json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : -1;
		json_decref(o);
		if (rc < 0) return werr(err, WX_IO, "profile %s: writing json failed", p->name);
		fputc('\n', out);
	} else if (strcmp(format, "pfc") == 0 || strcmp(format, "bpf") == 0) {
		int pfc = format[0] == 'p';
		unsigned char *buf = NULL;
		const void *bytes;
		size_t len;
#ifndef CAPSULE_SECCOMP_GENERATOR
		const struct capsule_seccomp_program *e = capsule_seccomp_embedded(p);
#else
		const struct capsule_seccomp_program *e = NULL;
#endif
		if (e) {
			bytes = pfc ? (const void *)e->pfc : (const void *)e->bpf;
			len = pfc ? e->pfc_len : e->bpf_len;
		} else {
			if (export_profile(p, pfc, &buf, &len, err) < 0) return -1;
			bytes = buf;
		}
		if (len && fwrite(bytes, 1, len, out) != len) {
			free(buf);
			return werr(err, WX_IO, "profile %s: writing %s failed", p->name, format);
		}
		free(buf);
	} else {
		return werr(err, WX_USAGE, "profile format '%s' unknown (text, json, pfc, bpf)", format);
	}
	if (fflush(out) != 0) return werr(err, WX_IO, "profile %s: write failed: %s", p->name, strerror(errno));
	return 0;
}

/* audit/host.h: the host side of `worldd audit` (audit/audit.h).
 *
 * Owns: the audit's private work directory (a copy of the probe and of a
 * source file, readable by uid 65534; a secret file, a world-writable host
 * directory, a scratch directory, the capsules' working directory), the
 * host-side targets of the escape attempts (the probe's listener `probe
 * serve`, two sleeping victim processes), every child process the audit
 * starts (remembered by pid and start time, so cleanup never signals a
 * recycled pid), running a command with its output captured (as the caller,
 * as uid 65534, or inside a throwaway namespace for controls that change
 * state), the host snapshot compared before and after, and cleanup on every
 * path: ah_cleanup kills what was started, removes the SysV segment and the
 * work directory; SIGINT, SIGTERM and SIGHUP only set ah_interrupted, which
 * every wait here checks, so the caller unwinds and cleans up.
 *
 * Knows nothing of capsules or verdicts: it runs what it is given. */
#ifndef WORLD_AUDIT_HOST_H
#define WORLD_AUDIT_HOST_H
#include "common/error.h"
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#define AH_MAX_PIDS 64

struct audit_host {
	char work[PATH_MAX];                 /* the private directory (0755) */
	char probe[PATH_MAX + 16];           /* work/probe: the copy capsules pin */
	char src[PATH_MAX + 16];             /* work/main.ail: a source the probe ignores */
	char tmp[PATH_MAX + 16];             /* work/tmp: the working directory of capsule runs */
	char hostdir[PATH_MAX + 16];         /* work/hostdir: world-writable, must stay empty */
	char scratch[PATH_MAX + 16];         /* work/scratch: the controls' working directory */
	char secret[PATH_MAX + 16];          /* work/secret.txt: a host file (0644) */
	char serve_dir[PATH_MAX + 16];       /* work/serve: the listener's files (hits) */
	char worktree[PATH_MAX + 16];        /* work/worktree: a tool run's /work (readme.txt,
	                                        sub/, secret-link -> the secret), must stay as it is */
	char tag[16];                        /* the probe's cmdline tag base: escprobe:TAG */
	char host_ns[128];                   /* WORLD_ESCAPE_HOST_NS=mnt:..,uts:..,pid:.. */
	int tcp_port, udp_port, shm_id;
	char abstract[64], unix_path[PATH_MAX + 16];
	pid_t serve_pid, victim_pid, kill_pid;
	int is_root;
	/* every process started here: pid and /proc start time */
	pid_t pids[AH_MAX_PIDS];
	unsigned long long starts[AH_MAX_PIDS];
	int npids;
};

extern volatile sig_atomic_t ah_interrupted;

/* Signal handlers (SIGINT, SIGTERM, SIGHUP) that only set ah_interrupted. */
void ah_trap_signals(void);

/* Make the work directory and the targets; probe_file is copied in.
 * On failure everything made so far is removed again. */
int ah_setup(struct audit_host *h, const char *probe_file, struct world_err *err);
/* Kill every process started (by pid, only if its start time still
 * matches), reap them, remove the shm segment and the work directory. */
void ah_cleanup(struct audit_host *h);

/* The probe's input object for tag TAG (malloc'd JSON text). extra: more
 * members, already JSON ("\"mode\":\"one\",..."), or NULL. */
char *ah_params(const struct audit_host *h, const char *tag, const char *extra);

/* The same with host_file and host_dir of the caller's choosing. */
char *ah_params_files(const struct audit_host *h, const char *tag, const char *host_file, const char *host_dir,
                      const char *extra);
/* Every entry below dir, one sorted line each: path, type, mode, size,
 * mtime in ns, symlink target (malloc'd; NULL when dir is unreadable). */
char *ah_tree(const char *dir);

/* A sleeping victim (forked; ends by itself after 10 minutes; tracked). */
pid_t ah_sleeper(struct audit_host *h);
/* Alive = exists and is not a zombie (our own dead children are reaped). */
int ah_alive(pid_t pid);
/* True once pid is gone or a zombie, waiting up to ms. */
int ah_dies(pid_t pid, long ms);
/* Pids whose command line holds "escprobe:TAG" (TAG may be a prefix of the
 * job tags: the base tag finds every job's). Returns the count (<= max). */
int ah_tagged(const char *tag, pid_t *out, int max);
/* The same, waiting up to ms for the list to empty. */
int ah_tagged_settle(const char *tag, pid_t *out, int max, long ms);

/* What the host looks like (malloc'd text): mounts, hostname, ctrl-alt-del,
 * domain name, the host directory's entries, tagged processes. */
char *ah_snapshot(const struct audit_host *h);
/* CLOCK_REALTIME - CLOCK_BOOTTIME in seconds: a stepped clock moves it. */
double ah_clock_offset(void);
/* Number of lines in the listener's hit log, per kind ("tcp", "udp", ...);
 * ah_hits_text: "tcp:N udp:N" (static buffer). */
int ah_hits(const struct audit_host *h, const char *kind);
const char *ah_hits_text(const struct audit_host *h);
void ah_hits_clear(const struct audit_host *h);

/* One command with captured stdout (2 MiB kept) and stderr (64 KiB kept). */
enum ah_as { AH_AS_CALLER = 0, AH_AS_NOBODY = 1 };
struct ah_cmd {
	/* in */
	char *argv[32];
	int as;              /* AH_AS_NOBODY: setgroups(0), gid/uid 65534 before exec */
	int private_ns;      /* a throwaway mount/UTS/net/pid namespace, tmpfs cwd */
	int fd7;             /* /etc/hostname open on fd 7 (the leaked_fds control) */
	int host_ns_env;     /* WORLD_ESCAPE_HOST_NS in the environment */
	const char *cwd;
	long timeout_ms;     /* the command's own deadline; the audit kills it 60 s later */
	/* out */
	pid_t pid;
	int running, done;
	int rc;              /* exit status, or 128+signal */
	int hung;            /* killed by the audit (liveness bound) */
	long maxrss_kb;
	long t0_ms, elapsed_ms;
	int outfd, errfd;
	char *out, *err;     /* NUL-terminated, trailing whitespace stripped */
};
/* Start c (argv[0] is a path); -1 with err on failure. */
int ah_start(struct audit_host *h, struct ah_cmd *c, struct world_err *err);
/* Non-blocking: 1 when c has finished (outputs read), 0 while it runs. */
int ah_poll(struct ah_cmd *c);
/* Run cmds[0..n) with at most jobs at a time; returns -1 when interrupted
 * (the running ones are ended) or a start failed. */
int ah_run_all(struct audit_host *h, struct ah_cmd *cmds, size_t n, int jobs, struct world_err *err);
/* Wait for one started command. */
int ah_wait(struct ah_cmd *c);
void ah_cmd_free(struct ah_cmd *c);
/* Monotonic milliseconds. */
long ah_now_ms(void);
void ah_sleep_ms(long ms);
/* A text file whole (at most max bytes), NUL-terminated; NULL when it
 * cannot be opened or read (never half a file). The caller frees it. */
char *ah_read_text(const char *path, size_t max);
/* The value of the first line "KEY<sep>VALUE" of text, copied into out
 * (cap bytes, cut to fit); with sep ':' (/proc's "Key:\tvalue") the blanks
 * after it are skipped. out is "" and NULL is returned when there is none. */
const char *ah_line_value(const char *text, const char *key, char sep, char *out, size_t cap);

#endif

/* capsule/profile.h: capsule profiles as data.
 *
 * Owns: the three named profiles (`transition`, `source-check`,
 * `tool-run`), defined in one table in profile.c; every layer of a profile
 * (namespaces, mounts, rlimits, cgroup limits, environment, landlock
 * policy, seccomp allowlist) is a field here, so that the code that builds a
 * capsule (capsule.c) and the code that prints it for a reviewer (the
 * renderers below) read the same data. Also owns building the libseccomp
 * filter from a profile and exporting it (PFC text, raw BPF).
 *
 * Seccomp policy (every profile): default action SECCOMP_RET_USER_NOTIF.
 * The supervisor holds the listener: a known syscall that is not on the
 * allowlist is not answered: the capsule is killed (the call never returns) and the run fails with
 * "syscall denied: NAME"; a syscall number that libseccomp does not know
 * (newer than this build) is answered ENOSYS and the run continues, so that
 * runtimes fall back to older calls. Without a listener the kernel answers
 * ENOSYS. Non-native ABIs (x32 numbers, i386 int 0x80) kill the process. */
#ifndef WORLD_CAPSULE_PROFILE_H
#define WORLD_CAPSULE_PROFILE_H
#include "common/error.h"
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Inside the capsule the user and group are this id (never 0). */
#define CAPSULE_INSIDE_ID 1000
/* Started as root, the capsule's user and group map to host id
 * CAPSULE_HOST_ID_BASE + (host pid of the capsule's init). Pids are below
 * 2^22 (pid_max limit), so the range is [0x70000000, 0x70400000): inside the
 * block systemd documents as unused, unique per live capsule, and never a
 * login account. */
#define CAPSULE_HOST_ID_BASE 0x70000000u
#define CAPSULE_HOST_ID_SPAN 0x00400000u
/* The pinned interpreter's fd number inside the capsule; execveat is
 * allowed only on this fd with AT_EMPTY_PATH. */
#define CAPSULE_INTERP_FD 10
/* The setup channel inside the capsule (close-on-exec). */
#define CAPSULE_SETUP_FD 12
/* Protocol fds kept for the capsule are renumbered 3, 4, ... (at most this many). */
#define CAPSULE_MAX_KEEP_FDS 6

enum capsule_sc_kind {
	SC_ALLOW,          /* allowed with any arguments */
	SC_ALLOW_IOCTL,    /* ioctl: only the listed commands, compared under a 32-bit mask */
	SC_ALLOW_CLONE,    /* clone: only without any CLONE_NEW* flag */
	SC_ALLOW_EXEC,     /* execveat: only fd CAPSULE_INTERP_FD with flags AT_EMPTY_PATH */
	SC_ALLOW_PRCTL,    /* prctl: only the listed read-only options and PR_SET_NAME */
	SC_ERRNO,          /* answered with errno (no report), e.g. clone3 -> ENOSYS */
	SC_ALLOW_SETUP_SEND, /* sendmsg: only on CAPSULE_SETUP_FD (hands the listener over) */
	SC_ALLOW_SOCKET,   /* socket, socketpair: only AF_UNIX, AF_INET, AF_INET6 (arg0, exact);
	                    * AF_NETLINK answered EAFNOSUPPORT (glibc's address probes); others reported */
	SC_ALLOW_MODE1,    /* chmod, fchmod, creat, mknod, mkdir: allowed if (arg1 & 06000) == 0;
	                    * a mode with S_ISUID or S_ISGID answered EPERM (no setuid files on the host) */
	SC_ALLOW_MODE2,    /* fchmodat, fchmodat2, open, mknodat, mkdirat: the same on arg2 */
	SC_ALLOW_MODE3,    /* openat: the same on arg3 */
};

struct capsule_syscall {
	const char *name;
	enum capsule_sc_kind kind;
	int errno_value;   /* SC_ERRNO only */
	const char *why;   /* one line for the reviewer */
};

struct capsule_limits {
	uint64_t wall_ms;        /* default deadline of one run */
	uint64_t rlim_as;        /* RLIMIT_AS bytes */
	uint64_t rlim_data;      /* RLIMIT_DATA bytes */
	uint64_t rlim_cpu_s;     /* RLIMIT_CPU seconds (soft; hard = soft + 1) */
	uint64_t rlim_fsize;     /* RLIMIT_FSIZE bytes */
	uint64_t rlim_nofile;    /* RLIMIT_NOFILE */
	uint64_t rlim_nproc;     /* RLIMIT_NPROC */
	uint64_t rlim_stack;     /* RLIMIT_STACK bytes */
	uint64_t cg_memory;      /* cgroup memory limit bytes */
	uint64_t cg_pids;        /* cgroup pids limit */
	uint64_t root_size;      /* tmpfs root size bytes (read-only after staging) */
	uint64_t cache_size;     /* tmpfs .capsule-cache size bytes (writable) */
	uint64_t stdout_cap;     /* bytes of stdout captured before the run fails */
	uint64_t stderr_cap;     /* bytes of stderr captured (more fails the run) */
	uint64_t output_cap;     /* output object bytes */
	uint64_t args_cap;       /* args payload bytes */
};

struct capsule_profile {
	const char *name;
	const char *purpose;
	unsigned long namespaces;        /* CLONE_NEW* flags */
	const char *const *argv;         /* interpreter argv after argv[0]; NULL = caller's */
	const char *const *staged;       /* paths staged in the root (dirs end in '/') */
	/* Staged files that stay writable on the read-only root: each is its own
	 * bind mount (rw,nosuid,nodev,noexec) of the file onto itself, owned by
	 * the capsule user, mode 0600, created empty when the caller staged none.
	 * It can be rewritten in place but not renamed, unlinked or replaced; its
	 * bytes count against the root tmpfs size. NULL = none. */
	const char *const *writable;
	const char *const *devices;      /* host device nodes bind-mounted read-only, or NULL */
	/* Where a caller-given host directory (the episode's worktree,
	 * capsule_spec.worktree) is mounted read-only inside the root
	 * (ro,nosuid,nodev,noexec; landlock: read only), e.g. "/work"; NULL =
	 * this profile takes none. */
	const char *worktree_mount;
	const char *hostname;
	struct capsule_limits limits;
	const struct capsule_syscall *syscalls; /* terminated by name NULL */
	const char *const *denied_explicitly;   /* documented denials (enforced by default action) */
	const unsigned long *ioctl_cmds;        /* allowed ioctl commands, 0-terminated */
	const int *prctl_options;               /* allowed prctl options, -1-terminated */
	int landlock;                           /* apply the landlock policy below when the kernel has it */
	/* The exec capsule (capsule/exec_capsule.h): a root of host system
	 * directories, a writable worktree and cache, execve allowed. NULL for
	 * the interpreter profiles. */
	const struct capsule_exec_layout *exec;
};

/* The fixed part of an exec capsule's root (profile "exec"); the caller's
 * worktree, cache, protected names and read roots are added per run. */
struct capsule_exec_layout {
	const char *const *system;     /* host paths bound read-only at their own path (a symlink is
	                                * copied as a symlink; an absent one is skipped) */
	const char *const *etc_masked; /* under /etc: each hidden (a file: /dev/null bound over it; a
	                                * directory: an empty read-only tmpfs), when present */
	const char *const *devices;    /* host device nodes bound at their path in a fresh /dev tmpfs */
	uint64_t tmp_size;             /* the private /tmp tmpfs (bytes, charged to the memory group) */
	uint64_t ll_system, ll_write, ll_proc, ll_dev; /* landlock rights (system dirs and read roots;
	                                * /work, /cache, /tmp; /proc; each device) */
};

/* Landlock policy (carried constants: Debian 12's headers define only ABI
 * v1). Handled: every filesystem right of the running ABI, TCP bind and
 * connect (ABI >= 4), abstract-unix-socket and signal scoping (ABI >= 6).
 * Granted: read on "/" (the staged files), read+write+create+remove on
 * "/.capsule-cache", read+write on each listed device, read+write+truncate
 * on each writable staged file, read on the worktree mount. Never granted:
 * execute (the pinned interpreter is a memfd, outside any filesystem
 * landlock governs), make_char/block/fifo/sock/sym, refer, any TCP port. */
#define CAPSULE_LL_FS_EXECUTE     (1ULL << 0)
#define CAPSULE_LL_FS_WRITE_FILE  (1ULL << 1)
#define CAPSULE_LL_FS_READ_FILE   (1ULL << 2)
#define CAPSULE_LL_FS_READ_DIR    (1ULL << 3)
#define CAPSULE_LL_FS_REMOVE_DIR  (1ULL << 4)
#define CAPSULE_LL_FS_REMOVE_FILE (1ULL << 5)
#define CAPSULE_LL_FS_MAKE_CHAR   (1ULL << 6)
#define CAPSULE_LL_FS_MAKE_DIR    (1ULL << 7)
#define CAPSULE_LL_FS_MAKE_REG    (1ULL << 8)
#define CAPSULE_LL_FS_MAKE_SOCK   (1ULL << 9)
#define CAPSULE_LL_FS_MAKE_FIFO   (1ULL << 10)
#define CAPSULE_LL_FS_MAKE_BLOCK  (1ULL << 11)
#define CAPSULE_LL_FS_MAKE_SYM    (1ULL << 12)
#define CAPSULE_LL_FS_REFER       (1ULL << 13) /* ABI 2 */
#define CAPSULE_LL_FS_TRUNCATE    (1ULL << 14) /* ABI 3 */
#define CAPSULE_LL_FS_IOCTL_DEV   (1ULL << 15) /* ABI 5 */
#define CAPSULE_LL_NET_BIND_TCP   (1ULL << 0)  /* ABI 4 */
#define CAPSULE_LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define CAPSULE_LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define CAPSULE_LL_SCOPE_SIGNAL   (1ULL << 1)  /* ABI 6 */
#define CAPSULE_LL_ROOT_ACCESS  (CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_READ_DIR)
#define CAPSULE_LL_CACHE_ACCESS (CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_READ_DIR | \
	CAPSULE_LL_FS_WRITE_FILE | CAPSULE_LL_FS_MAKE_REG | CAPSULE_LL_FS_MAKE_DIR | \
	CAPSULE_LL_FS_REMOVE_FILE | CAPSULE_LL_FS_REMOVE_DIR | CAPSULE_LL_FS_TRUNCATE)
#define CAPSULE_LL_DEV_ACCESS   (CAPSULE_LL_FS_READ_FILE | CAPSULE_LL_FS_WRITE_FILE)
/* The rights landlock ABI `abi` handles (fs), or 0 when abi < 1. */
uint64_t capsule_landlock_fs_rights(int abi);
/* Landlock ABI of the running kernel (0 = unavailable). */
int capsule_landlock_abi(void);

/* Every rlimit a capsule sets, soft and hard, in the order capsule.c sets
 * them: capsule.c applies exactly this table and `profile show` prints it,
 * so the two cannot drift. RLIMIT_CPU's hard limit is one second above the
 * soft one (SIGXCPU at the soft limit, SIGKILL at the hard). NOFILE is set
 * last (after the seccomp listener's handover, capsule.c says why); AS and
 * DATA are set again on the interpreter itself by the capsule's agent. */
struct capsule_rlimit {
	int resource;      /* RLIMIT_* */
	const char *name;  /* "RLIMIT_AS" */
	uint64_t soft, hard;
};
#define CAPSULE_NRLIMITS 11
size_t capsule_profile_rlimits(const struct capsule_profile *p, struct capsule_rlimit out[CAPSULE_NRLIMITS]);
/* The rlimits a capsule leaves as its maker had them, NULL-terminated. */
extern const char *const capsule_rlimits_inherited[];

/* One landlock rule as capsule.c adds it (path beneath; `access` before
 * the running ABI's mask). with_worktree: the caller gave a worktree. */
struct capsule_ll_rule {
	char path[64];
	uint64_t access;
	int dir;           /* a directory; else a file, which carries only file rights */
};
#define CAPSULE_LL_MAX_RULES 24
size_t capsule_landlock_rules(const struct capsule_profile *p, int with_worktree,
                              struct capsule_ll_rule out[CAPSULE_LL_MAX_RULES]);
/* The rights rule r really grants under landlock ABI abi. */
uint64_t capsule_landlock_rule_rights(const struct capsule_ll_rule *r, int abi);
/* "read_file,read_dir" for a set of fs rights, into buf. */
const char *capsule_landlock_rights_names(uint64_t rights, char *buf, size_t n);

/* What the running host adds to a profile (`profile show`, `worldd audit`):
 * the landlock ABI of this kernel and, for each cgroup controller, where a
 * capsule made by this process would get its group or why it gets none.
 * Filled by capsule_host_facts_read (capsule.c). */
struct capsule_host_facts {
	int landlock_abi;          /* 0: no landlock */
	int cgroup_ok[2];          /* [0] memory, [1] pids: a group would be made */
	char cgroup[2][1280];      /* where, or why none */
};
void capsule_host_facts_read(struct capsule_host_facts *f);

/* The arch guards at the head of a seccomp program, read back from its
 * BPF bytes (not assumed): the architecture compared, the action for any
 * other one, and the x32 guard (numbers with __X32_SYSCALL_BIT set, except
 * -1, take the bad-arch action). Returns 0 when the program starts with
 * exactly that shape, else -1 with err naming the instruction. */
struct capsule_arch_guards {
	uint32_t arch;             /* AUDIT_ARCH_X86_64 */
	uint32_t bad_arch_action;  /* SECCOMP_RET_KILL_PROCESS */
	uint32_t x32_bit;          /* 0x40000000 */
	uint32_t x32_action;
};
int capsule_seccomp_guards(const unsigned char *bpf, size_t len, struct capsule_arch_guards *g,
                           struct world_err *err);

/* The profiles, terminated by name NULL. */
extern const struct capsule_profile capsule_profiles[];
const struct capsule_profile *capsule_profile_find(const char *name);

/* The environment every capsule gets (docs/design.md §2), NULL-terminated. The
 * root is "/" after pivot_root. */
extern const char *const capsule_env[];

/* Build the seccomp filter of p (libseccomp). Returns NULL and sets err. */
void *capsule_seccomp_build(const struct capsule_profile *p, struct world_err *err);
/* Build p's filter now and export its raw BPF program (or its PFC text)
 * into *buf (malloc'd, NUL-terminated), *len bytes (without the NUL). */
int capsule_seccomp_bpf(const struct capsule_profile *p, unsigned char **buf, size_t *len,
                        struct world_err *err);
int capsule_seccomp_pfc(const struct capsule_profile *p, unsigned char **buf, size_t *len,
                        struct world_err *err);

/* The programs of capsule_profiles[], built once at build time by
 * capsule/seccomp_gen (the same libseccomp calls as above) and embedded:
 * what a capsule loads and what `profile show --format bpf|pfc` prints.
 * Terminated by profile NULL. */
struct capsule_seccomp_program {
	const char *profile;
	const unsigned char *bpf;
	size_t bpf_len;
	const char *pfc;
	size_t pfc_len;
};
extern const struct capsule_seccomp_program capsule_seccomp_programs[];
/* The embedded program of p, which must be an entry of capsule_profiles[]
 * itself (a look-alike copy gets NULL: its filter is built at run time). */
const struct capsule_seccomp_program *capsule_seccomp_embedded(const struct capsule_profile *p);

/* Renderers: "text", "json", "pfc", "bpf" (raw bytes). Write to out.
 * pfc and bpf print the embedded program (exactly what is loaded), or for a
 * profile outside the table the one libseccomp builds now. The PFC text is
 * libseccomp's export with the x32 guard written in (libseccomp 2.5 leaves
 * it out of PFC although the BPF has it), read back from the BPF. host
 * (may be NULL) adds a "this_host" layer: landlock ABI and the rights each
 * rule really grants, cgroup placement or why none. */
int capsule_profile_render(const struct capsule_profile *p, const char *format,
                           const struct capsule_host_facts *host, FILE *out, struct world_err *err);
/* The profile as one JSON object (what --format json prints); NULL on OOM. */
json_t *capsule_profile_json(const struct capsule_profile *p, const struct capsule_host_facts *host);
/* Human name of an ioctl command if known ("TCGETS"), else NULL. */
const char *capsule_ioctl_name(unsigned long cmd);
#endif
